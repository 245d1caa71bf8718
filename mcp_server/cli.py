"""`trio-mcp`: serve the guarded PyTRIO tools over stdio (default) or streamable HTTP."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from pathlib import Path

import anyio
from mcp.server.lowlevel import Server

from mcp_server.app import AppState
from mcp_server.config import ConfigError, default_audit_log, load_config, parse_override
from mcp_server.ledger import LedgerError
from mcp_server.redact import RedactingFormatter
from mcp_server.server import build_server

log = logging.getLogger("trio_mcp")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="trio-mcp",
        description="MCP server with guarded train, sample and checkpoint tools for PyTRIO. "
        "Settings come from trio-mcp.toml or [tool.trio-mcp] in pyproject.toml; flags override.",
    )
    p.add_argument("--config", type=Path, help="settings file (default: ./trio-mcp.toml)")
    p.add_argument("--backend", choices=["auto", "local", "remote"], help="which PyTRIO answers")
    p.add_argument("--read-only", action="store_true", default=None, help="refuse state changes")
    p.add_argument("--no-delete", action="store_true", help="refuse delete_checkpoint")
    p.add_argument("--audit-log", type=Path, help="append-only JSONL audit log path")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override any setting, e.g. --set max_rank=32 (repeatable)",
    )
    p.add_argument("--http", action="store_true", help="streamable HTTP on 127.0.0.1")
    p.add_argument("--port", type=int, default=8765, help="HTTP port (default 8765)")
    p.add_argument(
        "--token-file",
        type=Path,
        default=default_audit_log().parent / "http-token",
        help="where a generated bearer token is written when TRIO_MCP_TOKEN is unset",
    )
    p.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    p.add_argument("--bench-tools", action="store_true", help=argparse.SUPPRESS)
    return p


def overrides_from(args: argparse.Namespace) -> dict[str, object]:
    overrides: dict[str, object] = dict(parse_override(item) for item in args.set)
    if args.backend:
        overrides["backend"] = args.backend
    if args.read_only:
        overrides["read_only"] = True
    if args.no_delete:
        overrides["allow_delete"] = False
    if args.audit_log:
        overrides["audit_log"] = str(args.audit_log)
    return overrides


# After SIGTERM/SIGINT: calls in flight get this long to end on their own (train_sft stops at
# its next step), then they are cancelled; past HARD_EXIT_S the process exits regardless.
GRACE_S = 4.0
FLUSH_S = 0.5
HARD_EXIT_S = 12.0


async def serve(server: Server[AppState], app: AppState, args: argparse.Namespace) -> int | None:
    """Serve until the client leaves (None) or a signal stops the server (its number)."""
    from mcp_server.transports import resolve_token, run_stdio, serve_http

    stop_http = anyio.Event()
    async with anyio.create_task_group() as group:
        group.start_soon(_stop_on_signal, app, group.cancel_scope, stop_http, args.http)
        if app.config.eager_backend:
            group.start_soon(app.backend.warm_up)
        group.start_soon(end_idle_runs, app)
        if args.http:
            await serve_http(server, args.port, resolve_token(args.token_file), stop_http)
        else:
            await run_stdio(server)
        group.cancel_scope.cancel()
    return app.stopped_by


async def end_idle_runs(app: AppState) -> None:
    """End runs idle past idle_run_timeout_s even when no call comes (calls also check)."""
    timeout = app.config.idle_run_timeout_s
    if timeout <= 0:
        return
    while True:
        await anyio.sleep(min(60.0, max(1.0, timeout / 4)))
        for run_id in app.runs.end_idle(timeout):
            log.info("ended run %s: idle for %.0f s (idle_run_timeout_s)", run_id, timeout)


async def _stop_on_signal(
    app: AppState, scope: anyio.CancelScope, stop_http: anyio.Event, http: bool
) -> None:
    async with anyio.create_task_group() as group:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for signum in signals:
                if app.stopped_by is not None:
                    os._exit(128 + signum)  # a second signal: stop now
                app.stopped_by = signum
                log.warning(
                    "%s: ending the calls in flight, then stopping", signal.Signals(signum).name
                )
                _exit_after(HARD_EXIT_S, 128 + signum)
                group.start_soon(_stop, app, scope, stop_http, http)


async def _stop(
    app: AppState, scope: anyio.CancelScope, stop_http: anyio.Event, http: bool
) -> None:
    with anyio.move_on_after(GRACE_S):
        while app.in_flight:
            await anyio.sleep(0.02)
    # The calls that ended have their answers on the way to the transport's writer.
    await anyio.sleep(FLUSH_S)
    if http:
        stop_http.set()  # uvicorn closes its streams and returns, which ends the group
        await anyio.sleep(GRACE_S)
    scope.cancel()  # stdio, and whatever is still running


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    # stdout is the stdio wire: every log line goes to stderr.
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(RedactingFormatter("trio-mcp %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=args.log_level, handlers=[handler], force=True)
    # The SDK logs every HTTP request at INFO; keep the operator's stderr readable.
    logging.getLogger("httpx").setLevel(max(logging.WARNING, logging.getLevelName(args.log_level)))
    try:
        config = load_config(explicit=args.config, overrides=overrides_from(args))
    except ConfigError as exc:
        print(f"trio-mcp: {exc}", file=sys.stderr)
        return 2
    try:
        if args.bench_tools:
            from mcp_server.bench_tools import ECHO, RAW_ECHO

            server, app = build_server(config, extra_tools=[ECHO], raw_tools=[RAW_ECHO])
        else:
            server, app = build_server(config)
        # Read now: an unreadable ledger stops the server here, naming the file.
        app.ledger.load()
    except LedgerError as exc:
        print(f"trio-mcp: {exc}", file=sys.stderr)
        return 2
    stopped_by: int | None = None
    try:
        stopped_by = anyio.run(serve, server, app, args)
    except KeyboardInterrupt:  # before the signal receiver was installed
        stopped_by = signal.SIGINT
    finally:
        code = 0 if stopped_by is None else 128 + stopped_by
        # Closing the backend removes a throwaway data dir and releases a persistent one. A
        # client that closed stdin sends SIGTERM after 2 s (the MCP lifecycle): the close runs
        # to its end anyway, bounded by the watchdog.
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, signal.SIG_IGN)
        _exit_after(HARD_EXIT_S, code)
        app.close()
    if app.backend.started is not None or stopped_by is not None:
        # Past this point Python would run the SDK's exit hooks against a service that is gone
        # and tear down the model libraries' threads (which aborts the process); nothing is left
        # to flush but the standard streams.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def _exit_after(seconds: float, code: int) -> None:
    watchdog = threading.Timer(seconds, os._exit, args=(code,))
    watchdog.daemon = True
    watchdog.start()
