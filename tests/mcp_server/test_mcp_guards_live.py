"""Guards against a real backend (trio-local through the real SDK): concurrent calls never open
more runs or spend more budget than configured, a checkpoint saved outside the session cannot
bring in a disallowed model or a larger rank, and SIGTERM leaves no offline data behind."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client

from mcp_server.config import Config
from mcp_server.server import build_server
from tests.mcp_server.mcp_helpers import TOKEN, TRIO_MCP, free_port

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

EXAMPLES = [
    {"prompt": "Q: What is the capital of France?\nA:", "completion": " Paris."},
    {"prompt": "Q: What colour is the sky?\nA:", "completion": " Blue."},
]
DATUM = {
    "model_input": [9707, 1879, 13],
    "loss_fn_inputs": {"target_tokens": [1879, 13, 151645], "weights": [0, 1, 1]},
}


def _text(result) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


async def _gather(calls) -> list:
    results: list = [None] * len(calls)

    async def one(index: int, client: Client, name: str, arguments: dict) -> None:
        results[index] = await client.call_tool(name, arguments)

    async with anyio.create_task_group() as group:
        for index, (client, name, arguments) in enumerate(calls):
            group.start_soon(one, index, client, name, arguments)
    return results


async def test_guards_hold_against_a_real_backend(tmp_path) -> None:
    config = Config(
        backend="local",
        eager_backend=False,
        audit_log=tmp_path / "audit.jsonl",
        max_rank=16,
        max_concurrent_runs=2,
        max_session_steps=7,
    )
    probe, probe_app = build_server(config)
    async with Client(probe) as client:
        models = (await client.call_tool("list_models", {})).structured_content
    offered = [m["model"] if isinstance(m, dict) else m for m in models["models"]]
    allowed, other = offered[0], offered[1]
    service = probe_app.backend.started.service

    def outside_checkpoint(base_model: str, rank: int, name: str) -> str:
        # Saved with the SDK directly, as another script would: the session never saw it.
        training = service.create_lora_training_client(base_model=base_model, rank=rank)
        return training.save_state(name).result().path

    wrong_model = await anyio.to_thread.run_sync(outside_checkpoint, other, 8, "wrong-model")
    wrong_rank = await anyio.to_thread.run_sync(outside_checkpoint, allowed, 32, "wrong-rank")
    fine = await anyio.to_thread.run_sync(outside_checkpoint, allowed, 8, "fine")

    app = probe_app
    app.config = config.model_copy(update={"allowed_models": [allowed]})
    async with Client(probe) as client:
        # A resumed checkpoint enters the session through the same guards as a new run.
        refused = await client.call_tool("resume_training_run", {"checkpoint": wrong_model})
        assert refused.is_error and "allowed_models" in _text(refused), _text(refused)
        refused = await client.call_tool("resume_training_run", {"checkpoint": wrong_rank})
        assert refused.is_error and "max_rank" in _text(refused), _text(refused)
        sampled = await client.call_tool("sample", {"model": other, "prompt": "hi"})
        assert sampled.is_error and "allowed_models" in _text(sampled), _text(sampled)
        assert app.runs.runs == {} and app.runs.opening == 0

        resumed = await client.call_tool("resume_training_run", {"checkpoint": fine})
        assert not resumed.is_error, _text(resumed)
        assert resumed.structured_content["config"]["base_model"] == allowed

        # Five creations at once with one slot left: exactly one opens.
        created = await _gather(
            [(client, "create_training_run", {"base_model": allowed, "rank": 8})] * 5
        )
        assert sum(not r.is_error for r in created) == 1, [_text(r) for r in created]
        assert all("max_concurrent_runs" in _text(r) for r in created if r.is_error)
        runs = list(app.runs.runs)
        assert len(runs) == 2 and app.runs.opening == 0

        # Two 4-step train_sft calls on two runs with 7 steps left: one runs, one is refused.
        trained = await _gather(
            [
                (client, "train_sft", {"run_id": run, "examples": EXAMPLES, "steps": 4})
                for run in runs
            ]
        )
        assert sum(not r.is_error for r in trained) == 1, [_text(r) for r in trained]
        assert all("max_session_steps" in _text(r) for r in trained if r.is_error)
        assert app.budget.left().steps == 3

        # Fifteen train_step calls over both runs with 3 steps left: exactly three run.
        stepped = await _gather(
            [(client, "train_step", {"run_id": runs[i % 2], "datums": [DATUM]}) for i in range(15)]
        )
        assert sum(not r.is_error for r in stepped) == 3, [_text(r) for r in stepped]
        assert all("max_session_steps" in _text(r) for r in stepped if r.is_error)
        left = app.budget.left()
        assert left.steps == 0 and app.budget.steps_held == 0 and app.budget.steps_used == 7
    app.close()


def _leftover_data(tmpdir: Path) -> list[str]:
    return sorted(
        p.name for p in tmpdir.iterdir() if p.name.startswith(("trio-local-", "trio-mcp-"))
    )


def _start(tmp_path: Path, tmpdir: Path, transport: str) -> tuple[subprocess.Popen, Path]:
    log = tmp_path / f"stderr-{time.monotonic_ns()}.log"
    env = {**os.environ, "TMPDIR": str(tmpdir), "TRIO_MCP_TOKEN": TOKEN}
    env.pop("PYTRIO_API_KEY", None)
    args = [TRIO_MCP, "--backend", "local", "--audit-log", str(tmp_path / "audit.jsonl")]
    args += ["--set", "local_data_dir=temporary"]
    if transport == "http":
        args += ["--http", "--port", str(free_port())]
    with log.open("w") as err:
        process = subprocess.Popen(
            args, cwd=tmp_path, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err
        )
    deadline = time.monotonic() + 120
    while "backend ready" not in log.read_text():
        assert process.poll() is None, log.read_text()
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.1)
    return process, log


@pytest.mark.parametrize(
    ("transport", "signum"),
    [
        # SIGINT on stdio and SIGTERM on HTTP, with a call running: test_mcp_faults.py.
        ("stdio", signal.SIGTERM),
        ("http", signal.SIGINT),
        ("stdio", signal.SIGKILL),
        ("stdio", None),  # the client closes stdin, as it does when it is done
    ],
)
def test_a_signal_removes_the_offline_backends_throwaway_data(tmp_path, transport, signum):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    process, log = _start(tmp_path, tmpdir, transport)
    try:
        left = _leftover_data(tmpdir)
        assert left, "local_data_dir = 'temporary' keeps the data in a temporary dir"
        if signum is None:
            process.stdin.close()
            process.wait(timeout=2)  # then an MCP client sends SIGTERM
        else:
            process.send_signal(signum)
            process.wait(timeout=10)  # stdin stays open: the signal alone stops it
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    if signum == signal.SIGKILL:
        # No chance to clean up: the next server to start removes what the killed one left.
        assert _leftover_data(tmpdir) == left
        process, log = _start(tmp_path, tmpdir, transport)
        try:
            assert set(_leftover_data(tmpdir)).isdisjoint(left), log.read_text()
            assert len(_leftover_data(tmpdir)) == 1  # its own
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=10)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        signum = signal.SIGTERM
    assert process.returncode == (0 if signum is None else 128 + signum), log.read_text()
    assert _leftover_data(tmpdir) == [], log.read_text()
    assert "Traceback" not in log.read_text()
