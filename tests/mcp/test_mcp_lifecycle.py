"""A run's life across a server restart, against trio-local through the real SDK and the official
`mcp` client: end a run and open another in its slot; stop the server and start a new one on
the same data; the budget spent survives; a state checkpoint of the previous server resumes with
its step count continuing, under the new server's guards (read from the backend); the SDK's
temporary sampler weights stay out of the user's checkpoints; delete needs no run_id."""

from __future__ import annotations

import json
import time

import anyio
import pytest
from mcp import Client

from mcp_server.config import Config
from mcp_server.server import build_server

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


async def test_end_restart_resume_continues_steps_and_keeps_the_budget(tmp_path) -> None:
    started = time.perf_counter()
    config = Config(
        backend="local",
        local_data_dir=tmp_path / "data",
        eager_backend=False,
        audit_log=tmp_path / "audit.jsonl",
        max_concurrent_runs=1,
        max_session_steps=50,
    )
    server, app = build_server(config)
    async with Client(server) as client:
        run = (await _ok(client, "create_training_run", {"rank": 8, "seed": 0}))["run_id"]
        for _ in range(2):
            await _ok(client, "train_step", {"run_id": run, "datums": [DATUM]})
        state = (await _ok(client, "save_checkpoint", {"run_id": run, "name": "s2"}))["path"]
        weights = {"run_id": run, "name": "w2", "kind": "sampler"}
        sampler = (await _ok(client, "save_checkpoint", weights))["path"]
        # The SDK saves temporary sampler weights for this sample: not the user's checkpoint.
        await _ok(client, "sample", {"model": run, "prompt": "hi", "max_tokens": 2})

        refused = await client.call_tool("create_training_run", {"rank": 8})
        assert refused.is_error and "max_concurrent_runs" in _text(refused)
        assert run in _text(refused) and "end_training_run" in _text(refused)
        ended = await _ok(client, "end_training_run", {"run_id": run})
        assert ended["checkpoints_kept"] == [state, sampler] and ended["slots_free"] == 1
        assert ended["ended_at_step"] == 2 and ended["unsaved_steps"] == 0
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
        assert (await _resource(client, "trio-mcp://budget"))["steps_used"] == 2
    app.close()

    # A new server on the same data: nothing of the first one is in memory.
    server, app = build_server(config.model_copy(update={"max_rank": 8}))
    async with Client(server) as client:
        budget = await _resource(client, "trio-mcp://budget")
        assert (budget["steps_used"], budget["steps"]) == (2, 48)
        limits = await _resource(client, "trio-mcp://limits")
        assert limits["limits"]["max_rank"] == 8 and limits["left"]["steps"] == 48

        listed = await _ok(client, "list_checkpoints", {})
        paths = {c["path"]: c for c in listed["checkpoints"]}
        assert paths[state]["step"] == 2 and paths[state]["kind"] == "training"
        assert paths[sampler]["step"] == 2 and paths[sampler]["kind"] == "sampler"
        assert not any(c["temporary"] for c in listed["checkpoints"])
        assert listed["temporary_hidden"] >= 1
        shown = await _ok(client, "list_checkpoints", {"run_id": run, "include_temporary": True})
        assert any(c["temporary"] for c in shown["checkpoints"])

        wrong_kind = await client.call_tool("resume_training_run", {"checkpoint": sampler})
        assert wrong_kind.is_error and "is a sampler checkpoint" in _text(wrong_kind)
        # The guards of this server apply through the run that saved it, read from the backend.
        app.config = app.config.model_copy(update={"max_rank": 4, "min_rank": 4})
        refused = await client.call_tool("resume_training_run", {"checkpoint": state})
        assert refused.is_error and "max_rank" in _text(refused), _text(refused)
        app.config = app.config.model_copy(update={"max_rank": 8})

        resumed = await _ok(client, "resume_training_run", {"checkpoint": state})
        assert (resumed["resumed_at_step"], resumed["step"]) == (2, 2)
        stepped = await _ok(client, "train_step", {"run_id": resumed["run_id"], "datums": [DATUM]})
        assert stepped["step"] == 3

        deleted = await _ok(client, "delete_checkpoint", {"checkpoint": state, "confirm": state})
        assert deleted["run_id"] == run
        assert (await _resource(client, "trio-mcp://budget"))["steps_used"] == 3
    app.close()
    print(f"lifecycle across a restart: {time.perf_counter() - started:.1f} s")
