"""A run's life, against trio-local through the real SDK and the official `mcp` client: end a run
and open another in its slot (also from concurrent calls); an ended run's checkpoints are read
from the backend, under the server's guards, and resume with their step count; the temporary
sampler weights stay out of the user's checkpoints and end with the run; delete needs no run_id.
(The restart of a server that stopped cleanly is part of tests/mcp_server/test_mcp_agent_e2e.py.)

A server process killed in the middle of an update (SIGKILL: no cleanup at all), then a new one
on the same data: every step it counted is in the budget, nothing is held or half-written."""

from __future__ import annotations

import contextlib
import json
import signal
import time

import anyio
import pytest
from mcp import Client

from mcp_server.config import Config
from mcp_server.server import build_server
from tests.mcp_server.mcp_helpers import authorised_client, http_server_process

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

DATUM = {
    "model_input": [9707, 1879, 13],
    "loss_fn_inputs": {"target_tokens": [1879, 13, 151645], "weights": [0, 1, 1]},
}


def _text(result) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


async def _ok(client: Client, tool: str, arguments: dict) -> dict:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, (tool, _text(result))
    assert len(_text(result)) < 500, _text(result)  # a summary; the result is structured
    return result.structured_content


async def _gather(client: Client, calls: list[tuple[str, dict]]) -> list:
    results: list = [None] * len(calls)

    async def one(index: int, tool: str, arguments: dict) -> None:
        results[index] = await client.call_tool(tool, arguments)

    async with anyio.create_task_group() as group:
        for index, (tool, arguments) in enumerate(calls):
            group.start_soon(one, index, tool, arguments)
    return results


async def _resource(client: Client, uri: str) -> dict:
    return json.loads((await client.read_resource(uri)).contents[0].text)


async def test_end_resume_and_the_guards_of_an_ended_runs_checkpoints(tmp_path) -> None:
    started = time.perf_counter()
    config = Config(
        backend="local",
        local_data_dir=tmp_path / "data",
        eager_backend=False,
        audit_log=tmp_path / "audit.jsonl",
        max_concurrent_runs=1,
        max_session_steps=50,
        max_rank=8,
    )
    server, app = build_server(config)
    async with Client(server) as client:
        run = (await _ok(client, "create_training_run", {"rank": 8, "seed": 0}))["run_id"]
        for _ in range(2):
            await _ok(client, "train_step", {"run_id": run, "datums": [DATUM]})
        state = (await _ok(client, "save_checkpoint", {"run_id": run, "name": "s2"}))["path"]
        weights = {"run_id": run, "name": "w2", "kind": "sampler"}
        sampler = (await _ok(client, "save_checkpoint", weights))["path"]
        # sample saves temporary sampler weights of the run's current weights: not the user's.
        await _ok(client, "sample", {"model": run, "prompt": "hi", "max_tokens": 2})
        listed = await _ok(client, "list_checkpoints", {})
        paths = {c["path"]: c for c in listed["checkpoints"]}
        assert paths[state]["step"] == 2 and paths[state]["kind"] == "training"
        assert paths[sampler]["step"] == 2 and paths[sampler]["kind"] == "sampler"
        assert not any(c["temporary"] for c in listed["checkpoints"])
        assert listed["temporary_hidden"] == 1
        shown = {"run_id": run, "include_temporary": True}
        every = (await _ok(client, "list_checkpoints", shown))["checkpoints"]
        temporary = [c["path"] for c in every if c["path"] not in (state, sampler)]
        assert len(temporary) == 1

        refused = await client.call_tool("create_training_run", {"rank": 8})
        assert refused.is_error and "max_concurrent_runs" in _text(refused)
        assert run in _text(refused) and "end_training_run" in _text(refused)
        ended = await _ok(client, "end_training_run", {"run_id": run})
        assert ended["checkpoints_kept"] == [state, sampler] and ended["slots_free"] == 1
        assert ended["ended_at_step"] == 2 and ended["unsaved_steps"] == 0
        # Its temporary sampler weights are deleted now, not left for their 6-hour lifetime.
        assert ended["temporary_deleted"] == temporary
        after = (await _ok(client, "list_checkpoints", shown))["checkpoints"]
        assert sorted(c["path"] for c in after) == sorted([state, sampler])
        again = await client.call_tool("train_step", {"run_id": run, "datums": [DATUM]})
        assert again.is_error and "not open" in _text(again)
        other = await _ok(client, "create_training_run", {"rank": 8})  # in the freed slot
        # Ending at once from several calls, while another opens: one ends it, one slot.
        calls = [("end_training_run", {"run_id": other["run_id"]})] * 3
        calls += [("create_training_run", {"rank": 8})] * 2
        results = await _gather(client, calls)
        ends, creates = results[:3], results[3:]
        assert sum(not r.is_error for r in ends) == 1, [_text(r) for r in ends]
        assert all("not open" in _text(r) for r in ends if r.is_error)
        assert sum(not r.is_error for r in creates) <= 1
        assert len(app.runs.runs) + app.runs.opening <= 1
        for run_id in list(app.runs.runs):
            await _ok(client, "end_training_run", {"run_id": run_id})

        # The run is ended: what its checkpoints are is read from the backend.
        wrong_kind = await client.call_tool("resume_training_run", {"checkpoint": sampler})
        assert wrong_kind.is_error and "is a sampler checkpoint" in _text(wrong_kind)
        # The guards of this server apply through the run that saved it.
        app.config = config.model_copy(update={"max_rank": 4, "min_rank": 4})
        refused = await client.call_tool("resume_training_run", {"checkpoint": state})
        assert refused.is_error and "max_rank" in _text(refused), _text(refused)
        app.config = config

        resumed = await _ok(client, "resume_training_run", {"checkpoint": state})
        assert (resumed["resumed_at_step"], resumed["step"]) == (2, 2)
        stepped = await _ok(client, "train_step", {"run_id": resumed["run_id"], "datums": [DATUM]})
        assert stepped["step"] == 3

        deleted = await _ok(client, "delete_checkpoint", {"checkpoint": state, "confirm": state})
        assert deleted["run_id"] == run
        assert (await _resource(client, "trio-mcp://budget"))["steps_used"] == 3
    app.close()
    print(f"lifecycle: {time.perf_counter() - started:.1f} s")


async def test_a_server_killed_mid_update_loses_no_step_and_leaves_nothing_half_written(
    tmp_path, own_local_data_dir
) -> None:
    audit = tmp_path / "audit.jsonl"
    facts = [{"prompt": f"Fact {i}:", "completion": f" value {i}."} for i in range(8)]
    steps = 50
    reported: list[float] = []
    with http_server_process("--backend", "local", "--audit-log", str(audit), cwd=tmp_path) as (
        url,
        _,
        process,
    ):
        async with authorised_client(url) as client:
            run = (await _ok(client, "create_training_run", {"rank": 8, "seed": 0}))["run_id"]
            one = {"run_id": run, "examples": facts, "steps": 1}
            per_step = (await _ok(client, "train_sft", one))["tokens"]
            killed = anyio.Event()

            async def progress(done: float, total: float | None, message: str | None) -> None:
                reported.append(done)
                if done >= 3 and not killed.is_set():
                    process.kill()  # SIGKILL: no handler runs, nothing is flushed on the way out
                    killed.set()

            async def update() -> None:
                arguments = {**one, "steps": steps, "learning_rate": 1e-4}
                with contextlib.suppress(Exception):
                    await client.call_tool("train_sft", arguments, progress_callback=progress)

            with anyio.fail_after(60):
                async with anyio.create_task_group() as group:
                    group.start_soon(update)
                    await killed.wait()
                    process.wait()
                    group.cancel_scope.cancel()
    assert process.returncode == -signal.SIGKILL

    # A new server on the same data dir (what is checked here needs no backend).
    config = Config(
        backend="local", eager_backend=False, audit_log=audit, max_session_steps=steps + 10
    )
    ledger = own_local_data_dir / "trio-mcp-ledger.json"
    leftover = ledger.with_name(f".{ledger.name}.killed.tmp")  # as a kill mid-write leaves it
    leftover.write_text('{"steps_used": 1')
    server, app = build_server(config)
    async with Client(server) as client:
        budget = await _resource(client, "trio-mcp://budget")
        used = budget["steps_used"]
        # Every step the killed server reported is charged (it may have counted a few more
        # before the kill landed), each with its tokens: no step is lost or half-counted, and
        # nothing stays held.
        assert 1 + max(reported) <= used <= 1 + steps, (used, reported)
        assert budget["tokens_used"] == used * per_step
        assert (budget["steps_held"], budget["steps"]) == (0, steps + 10 - used)
        assert not leftover.exists()
        assert json.loads(ledger.read_text())["steps_used"] == used
        # The killed server's run is not open here; the error says how to go on.
        gone = await client.call_tool("train_sft", one)
        assert gone.is_error and "not open" in _text(gone)
        assert "resume_training_run" in _text(gone)
        assert app.backend.started is None
    app.close()
    lines = audit.read_text().splitlines()
    assert all(json.loads(line) for line in lines)  # a whole record per line
