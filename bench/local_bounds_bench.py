"""trio-local's largest requests: time, response size, server memory, and whether the service
kept answering meanwhile. Printed as a table.

    .venv/bin/python bench/local_bounds_bench.py [--max-tokens 256]

Runs `trio-local serve` as a child process and measures it through /proc: its resident memory
before a request and its peak during it (VmHWM, reset before each request). Every request is
accompanied by a poller sending GET /api/models every 50 ms; the slowest of those answers says
whether the request stalled the service (before the bounds, a 199-token prompt with
topk_prompt_logprobs=151936 hung for over 120 s, grew to 5.3 GB and held other requests 14 s).

- refused: that request; it is now refused before any work.
- prompt logprobs: the longest prompt the sampler takes, with the largest top-k it allows.
- generation: the most samples per request, each `--max-tokens` long.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from trio_local.catalogue import SAMPLER_LIMITS
from trio_local.protocol.bounds import MAX_SAMPLE_RESPONSE_BYTES, MAX_TOPK_PROMPT_LOGPROBS

BIN = Path(sys.executable).parent
MODEL = "Qwen/Qwen3-4B-Instruct-2507"
KEY = "bench-key-0123456789"
V1 = "/api/openapi/v1"


def start(data_dir: Path) -> tuple[subprocess.Popen, str]:
    server = subprocess.Popen(
        [
            *(str(BIN / "trio-local"), "serve", "--port", "0", "--cycle-ms", "0"),
            *("--data-dir", str(data_dir), "--api-key", KEY),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    for line in server.stdout:
        if match := re.search(r"serving PyTRIO at (\S+)", line):
            return server, match.group(1)
    raise SystemExit("trio-local serve did not start")


def memory_kb(pid: int, field: str) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(rf"^{field}:\s+(\d+) kB", status, re.M).group(1))


def reset_peak(pid: int) -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # resets VmHWM to the current RSS


def measure(server: subprocess.Popen, base: str, sampler: dict, body: dict) -> dict:
    http = httpx.Client(timeout=600, headers={"X-API-Key": KEY})
    token = sampler["actor_jwt"]["token"]
    path = f"{base}/actor/v1/sampling-runs/{sampler['sampling_run_cuid']}/sample"
    reset_peak(server.pid)
    before = memory_kb(server.pid, "VmRSS")
    done = threading.Event()
    slowest = [0.0]

    failed = [0]

    def poll() -> None:
        while not done.is_set():
            asked = time.monotonic()
            try:
                http.get(f"{base}/api/models").raise_for_status()
            except httpx.HTTPError:
                failed[0] += 1
            slowest[0] = max(slowest[0], time.monotonic() - asked)
            done.wait(0.05)

    poller = threading.Thread(target=poll)
    poller.start()
    started = time.monotonic()
    answer = httpx.post(
        path, headers={"Authorization": f"Bearer {token}"}, content=json.dumps(body), timeout=600
    )
    elapsed = time.monotonic() - started
    done.set()
    poller.join()
    peak = memory_kb(server.pid, "VmHWM")
    return {
        "status": answer.status_code,
        "seconds": elapsed,
        "response_mb": len(answer.content) / 2**20,
        "rss_before_mb": before / 1024,
        "peak_growth_mb": (peak - before) / 1024,
        "slowest_models_s": slowest[0],
        "failed_polls": failed[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-tokens", type=int, default=256)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="trio-local-bounds-") as tmp:
        server, base = start(Path(tmp))
        try:
            http = httpx.Client(timeout=120, headers={"X-API-Key": KEY})
            session = http.post(f"{base}{V1}/service-sessions", json={"sdk_version": "0.2.9"})
            session_id = session.json()["service_session_cuid"]
            sampler = http.post(
                f"{base}{V1}/service-sessions/{session_id}/sampling-runs",
                json={"base_model": MODEL},
            ).json()

            def body(tokens: list[int], **fields: object) -> dict:
                return {
                    "request_id": "req_bench",
                    "prompt": {"chunks": [{"type": "encoded_text", "tokens": tokens}]},
                    "sampling_params": {"max_tokens": 1},
                    **fields,
                }

            # warm-up: the model is built on first use
            measure(server, base, sampler, body([9707, 11]))
            longest = SAMPLER_LIMITS.max_seq_len - 1
            cases = {
                "refused: 199 tokens, topk 151936": body(
                    list(range(1000, 1199)),
                    return_prompt_logprobs=True,
                    topk_prompt_logprobs=151936,
                ),
                f"prompt logprobs: {longest} tokens, topk {MAX_TOPK_PROMPT_LOGPROBS}": body(
                    list(range(1000, 1000 + longest)),
                    return_prompt_logprobs=True,
                    topk_prompt_logprobs=MAX_TOPK_PROMPT_LOGPROBS,
                ),
                f"generation: {SAMPLER_LIMITS.max_batch_size} x {args.max_tokens} tokens": {
                    **body([9707], num_samples=SAMPLER_LIMITS.max_batch_size),
                    "sampling_params": {"max_tokens": args.max_tokens, "seed": 1},
                },
            }
            print(f"response bound: {MAX_SAMPLE_RESPONSE_BYTES // 2**20} MiB (refused past it)")
            header = (
                "request",
                "status",
                "s",
                "resp MB",
                "RSS MB",
                "peak +MB",
                "max /models s",
                "failed",
            )
            print("| " + " | ".join(header) + " |")
            print("|" + "---|" * len(header))
            for name, request in cases.items():
                row = measure(server, base, sampler, request)
                print(
                    f"| {name} | {row['status']} | {row['seconds']:.2f} | "
                    f"{row['response_mb']:.2f} | {row['rss_before_mb']:.0f} | "
                    f"{row['peak_growth_mb']:.0f} | {row['slowest_models_s']:.3f} | "
                    f"{row['failed_polls']} |",
                    flush=True,
                )
        finally:
            server.terminate()
            server.wait(30)


if __name__ == "__main__":
    main()
