"""`trio-local serve` and `trio-local run [service options] [--] COMMAND ...`."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from trio_local import catalogue
from trio_local.child import SIGNAL_POLL_S, record_signals, run_child
from trio_local.config import ConfigError, ServeConfig, default_data_dir, warmup_default
from trio_local.scratch import scratch_directory

# Long enough that a client's next request, sent as soon as a result arrives, misses the next
# boundary as it would on the service, so the submission patterns differ clearly (about 3, 2
# and 1 cycles per update); short enough that examples stay quick.
DEFAULT_CYCLE_MS = 200


def _service_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=None, help="TCP port; 0 picks a free one")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help=f"runs, checkpoints, key and tokenizer (default {default_data_dir()})",
    )
    parser.add_argument("--api-key", default=None, help="use this key instead of the generated one")
    parser.add_argument(
        "--cycle-ms",
        type=int,
        default=DEFAULT_CYCLE_MS,
        help=f"minimum clock-cycle length; 0 runs work back to back (default {DEFAULT_CYCLE_MS})",
    )
    parser.add_argument(
        "--max-runs", type=int, default=16, help="concurrent training runs before 429 (default 16)"
    )
    parser.add_argument(
        "--heartbeat-timeout",
        type=float,
        default=180.0,
        help="seconds without heartbeat or event before a run is ended (default 180)",
    )
    parser.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    parser.add_argument(
        "--check",
        action="store_true",
        help="check the data scripts send (unshifted targets, trained prompts, NaN, stale "
        "samplers...) and print a report at the end (also on `trio-local stats`)",
    )
    parser.add_argument(
        "--check-report",
        type=Path,
        default=None,
        metavar="FILE",
        help="also write the check report to FILE as JSON (implies --check)",
    )
    parser.add_argument(
        "--models",
        default=None,
        metavar="ID[,ID...]",
        help="announce and serve only these model ids (default: announce the catalogue, serve "
        "any Qwen Org/Name id); other ids get model_not_found",
    )
    parser.add_argument(
        "--max-seq-len",
        type=int,
        default=catalogue.DEFAULT_TRAIN_MAX_SEQ_LEN,
        help="longest training sequence, also the tokens per trainer event "
        f"(default {catalogue.DEFAULT_TRAIN_MAX_SEQ_LEN})",
    )
    parser.add_argument(
        "--max-sample-len",
        type=int,
        default=catalogue.DEFAULT_SAMPLE_MAX_SEQ_LEN,
        help="longest prompt + max_tokens of a sample request "
        f"(default {catalogue.DEFAULT_SAMPLE_MAX_SEQ_LEN})",
    )
    parser.add_argument(
        "--no-warmup",
        dest="warmup",
        action="store_false",
        default=warmup_default(),
        help="do not import the model libraries and build the default model in the background "
        "from the start (saves that model's ~200-300 MB while unused; the first request then "
        "pays a few seconds); also TRIO_LOCAL_WARMUP=0",
    )
    parser.add_argument(
        "--warmup-model",
        default=None,
        metavar="ID",
        help="the model id to warm up (default: the first announced id, "
        f"{catalogue.DEFAULT_MODEL} unless --models says otherwise)",
    )
    parser.add_argument(
        "--no-weights-cache",
        dest="weights_cache",
        action="store_false",
        help="always seed stand-in weights afresh instead of keeping them in trio-local's cache "
        "directory (~150-250 MB per model id, newest 4 kept)",
    )
    parser.add_argument("--log-level", default="warning", help="uvicorn log level")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trio-local",
        description="An offline PyTRIO service backed by a tiny model that really trains.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve until interrupted")
    _service_options(serve)
    run = commands.add_parser(
        "run",
        help="serve on a free port while COMMAND runs with PYTRIO_BASE_URL/PYTRIO_API_KEY set",
    )
    _service_options(run)
    run.add_argument("child", nargs=argparse.REMAINDER, metavar="COMMAND ...")
    stats = commands.add_parser("stats", help="per-run clock-cycle statistics of a service")
    stats.add_argument(
        "--url",
        default=None,
        help="the service's base URL or stats URL (default: TRIO_LOCAL_STATS_URL, then "
        "PYTRIO_BASE_URL, then http://127.0.0.1:8765)",
    )
    stats.add_argument("--json", action="store_true", help="print the raw JSON")
    return parser


def _config(args: argparse.Namespace, default_port: int) -> ServeConfig:
    return ServeConfig(
        host=args.host,
        port=default_port if args.port is None else args.port,
        data_dir=args.data_dir or default_data_dir(),
        api_key=args.api_key or os.environ.get("TRIO_LOCAL_API_KEY") or None,
        cycle_ms=args.cycle_ms,
        max_training_runs=args.max_runs,
        heartbeat_timeout_s=args.heartbeat_timeout,
        threads=args.threads,
        log_level=args.log_level,
        check=args.check or args.check_report is not None,
        check_report=args.check_report,
        models=tuple(m.strip() for m in (args.models or "").split(",") if m.strip()),
        train_max_seq_len=args.max_seq_len,
        sample_max_seq_len=args.max_sample_len,
        warmup=args.warmup,
        warmup_model=args.warmup_model,
        weights_cache=args.weights_cache,
    )


def _start(config: ServeConfig):  # -> RunningServer
    from trio_local.http.serving import RunningServer
    from trio_local.service import Service

    return RunningServer(Service(config)).start()


def serve(args: argparse.Namespace) -> int:
    server = _start(_config(args, default_port=8765))
    service = server.service
    # Before the first line is printed: whoever reads it may signal at once, and a SIGTERM
    # without the handler would skip the shutdown (and the --check report).
    received = record_signals()
    print(f"trio-local serving PyTRIO at {server.base_url}", flush=True)
    if service.key_created:
        print(f"API key (shown once; stored 0600 in {service.data_dir}): {service.api_key}")
    elif not service.config.api_key:
        print(f"API key: stored in {service.data_dir / 'api_key'}")
    print(
        f"export MODELSCOPE_CACHE={service.environment(server.base_url)['MODELSCOPE_CACHE']}",
        flush=True,
    )
    while not received:  # see SIGNAL_POLL_S: a timed sleep lets the handler run
        time.sleep(SIGNAL_POLL_S)
    server.stop()
    _print_check_report(service)
    return 0


def _print_check_report(service) -> None:  # service: trio_local.service.Service
    report = service.finish_checks()
    if report is not None:
        print(report.render(), file=sys.stderr, flush=True)
        if service.config.check_report is not None:
            print(f"check report written to {service.config.check_report}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    child = list(args.child)
    if child and child[0] == "--":
        child = child[1:]
    if not child:
        print(
            "trio-local run: give a COMMAND to run, e.g. trio-local run python train.py",
            file=sys.stderr,
        )
        return 2
    # torch writes a compile cache to $TMPDIR/torchinductor_$USER on import; this run's goes
    # to a directory of its own, removed at the end (or by the next run, after a SIGKILL).
    with scratch_directory() as scratch:
        os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(scratch / "torchinductor"))
        return _serve_child(args, child)


def _serve_child(args: argparse.Namespace, child: list[str]) -> int:
    # SIGINT and SIGTERM wait until the child exists (to be forwarded to it); a signal that
    # arrives meanwhile still stops the service (finally) and ends the run.
    received = record_signals()
    server = _start(_config(args, default_port=0))
    try:
        server.wait_ready()
        if received:
            return 128 + received[0]
        env = {**os.environ, **server.service.environment(server.base_url)}
        return run_child(child, env, received, after=lambda: _print_check_report(server.service))
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "stats":
            from trio_local.stats_cli import show_stats

            return show_stats(args.url, as_json=args.json)
        return serve(args) if args.command == "serve" else run(args)
    except ConfigError as error:
        print(f"trio-local: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
