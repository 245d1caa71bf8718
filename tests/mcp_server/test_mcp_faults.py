"""trio-mcp under faults, against a real backend (trio-local through the real SDK): a cancelled
training call charges and records every step the backend took, and the same client trains on;
SIGINT (stdio) and SIGTERM (HTTP) end a running train_sft and the server within seconds; a
restarted server resumes the checkpoint the last one saved."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client

from mcp_server.config import Config
from mcp_server.server import build_server
from tests.mcp_server.mcp_helpers import TOKEN, TRIO_MCP, authorised_client, free_port, stdio_params
from trio_local.storage import checkpoints as ckpt_files

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

EXAMPLES = [
    {"prompt": "Q: What is the capital of France?\nA:", "completion": " Paris."},
    {"prompt": "Q: What colour is the sky?\nA:", "completion": " Blue."},
]
DATUM = {
    "model_input": list(range(100, 164)),
    "loss_fn_inputs": {"target_tokens": list(range(101, 165)), "weights": [1.0] * 64},
}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


async def lane(app, run_id: str) -> dict:
    """The backend's own counters for the run: `updates` is optimizer steps it completed."""
    base = app.backend.started.local.base_url
    async with httpx.AsyncClient(timeout=30) as http:
        stats = (await http.get(f"{base}/trio-local/stats")).json()
    return stats["runs"].get(run_id, {"updates": 0, "events": 0})


@pytest.mark.parametrize("tool", ["train_sft", "train_step"])
async def test_a_cancelled_training_call_counts_every_step_the_backend_took(local, tool):
    server, app = local
    async with Client(server) as client:
        created = await client.call_tool("create_training_run", {"rank": 4, "seed": 0})
        run_id = created.structured_content["run_id"]
        warm = await client.call_tool(
            "train_sft", {"run_id": run_id, "examples": EXAMPLES, "steps": 1}
        )
        assert not warm.is_error, warm.content
        if tool == "train_sft":
            arguments = {"run_id": run_id, "examples": EXAMPLES, "steps": 60}
        else:
            arguments = {"run_id": run_id, "datums": [DATUM] * 2}
            # train_step reports no progress: it is cancelled halfway through a step as long as
            # one uncancelled step takes.
            began = anyio.current_time()
            timed = await client.call_tool(tool, arguments)
            assert not timed.is_error, timed.content
            halfway = (anyio.current_time() - began) / 2
        used_before = app.budget.steps_used
        updates_before = (await lane(app, run_id))["updates"]
        reached = anyio.Event()

        async def progress(done: float, total: float | None, message: str | None) -> None:
            if done >= 2:
                reached.set()

        async with anyio.create_task_group() as group:

            async def train() -> None:
                result = await client.call_tool(tool, arguments, progress_callback=progress)
                raise AssertionError(f"the call ended before the cancel: {result.content}")

            group.start_soon(train)
            if tool == "train_sft":
                await reached.wait()
            else:
                await anyio.sleep(halfway)
            group.cancel_scope.cancel()

        state = await client.call_tool("get_training_run", {"run_id": run_id})
        recorded = state.structured_content["step"]
        taken = (await lane(app, run_id))["updates"]
        await anyio.sleep(1.0)
        assert (await lane(app, run_id))["updates"] == taken, "the backend stopped training"
        assert recorded == taken and len(state.structured_content["losses"]) == taken
        assert app.budget.steps_used - used_before == taken - updates_before
        assert app.budget.steps_held == 0
        if tool == "train_sft":
            assert 3 <= taken - updates_before < 60, taken
        else:
            assert taken == updates_before + 1, "the cancelled step ran and is counted"
        # The same client trains on: the cancel left the SDK's client usable.
        again = await client.call_tool(
            "train_sft", {"run_id": run_id, "examples": EXAMPLES, "steps": 1}
        )
        assert not again.is_error, again.content
        assert again.structured_content["step"] == taken + 1
        assert (await lane(app, run_id))["updates"] == taken + 1


async def test_a_cancelled_save_checkpoint_is_still_recorded(local, monkeypatch):
    server, _ = local
    # The backend's write of "cut" is held until the client has cancelled: the cancel lands while
    # the save is in progress on the backend, whatever the machine's load (a timed cancel did not).
    entered, release = threading.Event(), threading.Event()
    write = ckpt_files.save_checkpoint

    def held_write(store: Any, data_dir: Any, row: Any, *rest: Any, **options: Any) -> Any:
        if row.name == "cut":
            entered.set()
            release.wait(60)
        return write(store, data_dir, row, *rest, **options)

    monkeypatch.setattr(ckpt_files, "save_checkpoint", held_write)
    async with Client(server) as client:
        created = await client.call_tool("create_training_run", {"rank": 4, "seed": 1})
        run_id = created.structured_content["run_id"]
        first = await client.call_tool("save_checkpoint", {"run_id": run_id, "name": "first"})
        assert not first.is_error, first.content
        try:
            async with anyio.create_task_group() as group:

                async def save() -> None:
                    result = await client.call_tool(
                        "save_checkpoint", {"run_id": run_id, "name": "cut"}
                    )
                    raise AssertionError(f"the save ended before the cancel: {result.content}")

                group.start_soon(save)
                assert await anyio.to_thread.run_sync(entered.wait, 60), "the save never began"
                # The in-memory client returns once the server has answered the cancelled
                # request, so the backend is let go from a timer: a second is ample for the
                # server to see the cancel, far inside the SETTLE_S it then waits.
                threading.Timer(1.0, release.set).start()
                group.cancel_scope.cancel()
        finally:
            release.set()
        recorded: set[str] = set()
        with anyio.move_on_after(30):  # the cancelled call records once the backend answers
            while recorded != {"first", "cut"}:
                state = await client.call_tool("get_training_run", {"run_id": run_id})
                recorded = {c["name"] for c in state.structured_content["checkpoints"]}
                await anyio.sleep(0.05)
        listed = await client.call_tool("list_checkpoints", {"run_id": run_id})
    on_backend = {c["path"].rsplit("/", 1)[-1] for c in listed.structured_content["checkpoints"]}
    assert on_backend == {"first", "cut"}, on_backend
    assert recorded == on_backend


async def test_a_second_server_on_a_data_dir_in_use_names_the_setting(local, tmp_path):
    server, app = local
    async with Client(server) as client:
        assert not (await client.call_tool("list_models", {})).is_error  # the first one serves
    data_dir = app.config.local_data_dir
    second, second_app = build_server(
        Config(
            backend="local",
            eager_backend=False,
            audit_log=tmp_path / "audit.jsonl",
            local_data_dir=data_dir,
        )
    )
    try:
        async with Client(second) as client:
            refused = await client.call_tool("list_models", {})
    finally:
        second_app.close()
    text = refused.content[0].text
    assert refused.is_error and str(data_dir) in text and "local_data_dir" in text, text
    async with Client(server) as client:
        assert not (await client.call_tool("list_models", {})).is_error  # and still serves


def _state(pid: int) -> str | None:
    """The process's state letter (Z: exited, not yet reaped), or None when it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def _running(pid: int) -> bool:
    return _state(pid) not in (None, "Z", "X")


def _pid_of(marker: str) -> int:
    """The trio-mcp process whose command line holds `marker` (the stdio client spawns it)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                command = (entry / "cmdline").read_bytes()
                if (
                    marker.encode() in command
                    and b"trio-mcp" in command
                    and _running(int(entry.name))
                ):
                    return int(entry.name)
    raise AssertionError(f"no trio-mcp process with {marker}")


def _leftovers(tmpdir: Path) -> list[str]:
    return sorted(p.name for p in tmpdir.iterdir() if p.name.startswith(("trio-local-", "trio-m")))


async def _stop_a_running_train_sft(client: Client, run_id: str, kill) -> float:
    """Start a long train_sft, send the signal once it has taken a step; the call must end
    with the shutting-down error. Returns when the signal was sent."""
    reached = anyio.Event()
    outcome: list = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        reached.set()

    async def train() -> None:
        arguments = {"run_id": run_id, "examples": EXAMPLES, "steps": 200}
        outcome.append(await client.call_tool("train_sft", arguments, progress_callback=progress))

    async with anyio.create_task_group() as group:
        group.start_soon(train)
        await reached.wait()
        kill()
        signalled = time.monotonic()
    text = " ".join(getattr(c, "text", "") for c in outcome[0].content)
    assert outcome[0].is_error and "shutting down" in text and "of 200 steps" in text, text
    return signalled


async def test_signals_end_running_calls_and_the_next_server_resumes_what_was_saved(
    tmp_path, monkeypatch, own_local_data_dir
):
    """SIGINT to the stdio server and SIGTERM to the HTTP server while train_sft runs: the call
    ends with a clear error and the server is gone within seconds. Between the two, the HTTP
    server resumes the checkpoint the stdio server saved (the default data dir persists), and no
    temporary data dir is ever made."""
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    monkeypatch.setenv("TRIO_MCP_TOKEN", TOKEN)
    audit = str(tmp_path / "audit.jsonl")
    args = ["--backend", "local", "--audit-log", audit]

    async with Client(stdio_params(*args, cwd=tmp_path), read_timeout_seconds=300) as client:
        pid = _pid_of(audit)
        created = await client.call_tool("create_training_run", {"rank": 4, "seed": 0})
        run_id = created.structured_content["run_id"]
        saved = await client.call_tool("save_checkpoint", {"run_id": run_id, "name": "kept"})
        assert not saved.is_error, saved.content
        path = saved.structured_content["path"]
        signalled = await _stop_a_running_train_sft(
            client, run_id, lambda: os.kill(pid, signal.SIGINT)
        )
        while _running(pid) and time.monotonic() - signalled < 30:
            await anyio.sleep(0.05)
        stopped = time.monotonic() - signalled
    assert stopped < 10, f"stdio server still up {stopped:.1f} s after SIGINT"
    assert (own_local_data_dir / "trio-local.lock").exists()  # trio-local's own data dir

    port = free_port()
    with (tmp_path / "stderr.log").open("w") as log:
        process = subprocess.Popen(
            [TRIO_MCP, "--http", "--port", str(port), *args],
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    try:
        for _ in range(1200):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port)):
                break
            await anyio.sleep(0.05)
        async with authorised_client(f"http://127.0.0.1:{port}/mcp") as client:
            listed = await client.call_tool("list_checkpoints", {"run_id": run_id})
            assert path in [c["path"] for c in listed.structured_content["checkpoints"]]
            resumed = await client.call_tool("resume_training_run", {"checkpoint": path})
            assert not resumed.is_error, resumed.content
            new_run = resumed.structured_content["run_id"]
            signalled = await _stop_a_running_train_sft(
                client, new_run, lambda: process.send_signal(signal.SIGTERM)
            )
            while process.poll() is None and time.monotonic() - signalled < 30:
                await anyio.sleep(0.05)
            stopped = time.monotonic() - signalled
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
    assert stopped < 10, f"HTTP server still up {stopped:.1f} s after SIGTERM"
    assert process.returncode == 128 + signal.SIGTERM
    assert _leftovers(tmpdir) == []
