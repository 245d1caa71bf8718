"""Limits an agent can read, and what outlives a restart, without a backend: tools/list carries
the configured caps, trio-mcp://limits equals the configuration, the ledger keeps the budget
spent (exactly, under concurrent writers, atomically), idle runs end, results are lean."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

import pytest
from mcp import Client

from mcp_server.budget import Budget
from mcp_server.config import Config
from mcp_server.errors import GuardRefusal, InvalidInput
from mcp_server.guards import Refusals
from mcp_server.ledger import LOCAL_NAME, Ledger, LedgerError, ledger_path
from mcp_server.registry import summarise
from mcp_server.resources import NOT_LIMITS
from mcp_server.runs import CheckpointRecord, RunRegistry, RunState
from mcp_server.server import build_server
from mcp_server.transports import rejection, top_level_id

pytestmark = pytest.mark.anyio

TIGHT = {
    "max_steps_per_call": 7,
    "max_rank": 24,
    "min_rank": 8,
    "max_learning_rate": 1e-3,
    "max_sample_tokens": 64,
    "max_num_samples": 3,
    "max_examples_per_call": 5,
    "max_concurrent_runs": 2,
    "idle_run_timeout_s": 90.0,
}


def _property(schema: dict, *path: str) -> dict:
    node = schema
    for name in path:
        node = node["properties"][name]
        if "$ref" in node:
            node = schema["$defs"][node["$ref"].rsplit("/", 1)[1]]
    return node


def _bound(prop: dict, keyword: str) -> object:
    """`keyword` of the property, or of its non-null branch when it is optional."""
    branches = [b for b in prop.get("anyOf", []) if b.get("type") != "null"]
    return (branches[0] if branches else prop)[keyword]


async def test_tool_schemas_and_the_limits_resource_carry_the_configuration(tmp_path) -> None:
    config = Config(eager_backend=False, audit_log=tmp_path / "a.jsonl", **TIGHT)
    server, app = build_server(config)
    async with Client(server) as client:
        tools = {t.name: t.input_schema for t in (await client.list_tools()).tools}
        limits = json.loads((await client.read_resource("trio-mcp://limits")).contents[0].text)
        budget = json.loads((await client.read_resource("trio-mcp://budget")).contents[0].text)
    assert _bound(_property(tools["train_sft"], "steps"), "maximum") == 7
    assert _bound(_property(tools["train_sft"], "learning_rate"), "maximum") == 1e-3
    assert _bound(_property(tools["train_sft"], "examples"), "maxItems") == 5
    rank = _property(tools["create_training_run"], "rank")
    assert (rank["minimum"], rank["maximum"]) == (8, 24)
    assert _bound(_property(tools["sample"], "max_tokens"), "maximum") == 64
    assert _bound(_property(tools["sample"], "num_samples"), "maximum") == 3
    assert _bound(_property(tools["train_step"], "datums"), "maxItems") == 5
    adam = _property(tools["train_step"], "adam", "learning_rate")
    assert _bound(adam, "maximum") == 1e-3
    assert "x-trio-cap" not in json.dumps(tools)

    # Every limit of the configuration, with its value, and nothing else.
    expected = {
        name: value
        for name, value in config.model_dump(mode="json").items()
        if name not in NOT_LIMITS
    }
    assert limits["limits"] == expected
    assert limits["left"] == {"steps": 2000, "tokens": 5_000_000, "run_slots": 2}
    assert budget["steps"] == 2000 and budget["max_session_steps"] == 2000
    assert budget["steps_used"] == 0
    app.close()


async def test_a_call_past_a_cap_is_still_refused_by_the_guard(tmp_path) -> None:
    server, app = build_server(Config(eager_backend=False, audit_log=tmp_path / "a", max_rank=24))
    async with Client(server) as client:
        refused = await client.call_tool("create_training_run", {"rank": 32})
    assert refused.is_error and "max_rank" in refused.content[0].text
    app.close()


def test_the_budget_spent_survives_a_restart_and_writers_add_up(tmp_path) -> None:
    path = tmp_path / "data" / LOCAL_NAME
    budget = Budget.from_ledger(100, 1000, Ledger.open(path))
    with budget.reserve(5, 50) as held:
        held.spend(1, 10)  # every spend is written at once (a killed process loses none)
        held.spend(2, 20)
        assert Ledger.open(path).data.steps_used == 3
    assert budget.left().steps == 97
    assert Ledger.open(path).data.steps_used == 3  # the call ended: all of it is on disk

    # Two servers on the same file (and threads in each) add up exactly.
    first, second = Ledger.open(path), Ledger.open(path)

    def spend(ledger: Ledger) -> None:
        for _ in range(25):
            ledger.add_spend(1, 2, flush=True)

    threads = [threading.Thread(target=spend, args=(ledger,)) for ledger in (first, second) * 2]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    restarted = Budget.from_ledger(200, 1000, Ledger.open(path))
    assert restarted.left().steps == 200 - 3 - 100
    assert restarted.left().tokens == 1000 - 30 - 200
    restarted.reserve(97, 0).spend(97, 0)
    with pytest.raises(GuardRefusal, match="max_session_steps"):
        restarted.reserve(1, 0)
    # Every write was a rename of a complete file: no temporary file is left behind.
    assert sorted(p.name for p in path.parent.iterdir()) == [LOCAL_NAME, LOCAL_NAME + ".lock"]


def test_an_unreadable_ledger_is_refused_not_reset(tmp_path) -> None:
    path = tmp_path / LOCAL_NAME
    path.write_text('{"steps_used": "many"}')
    ledger = Ledger.deferred(lambda: path)
    budget = Budget.from_ledger(10, 10, ledger)
    with pytest.raises(LedgerError, match=str(path)):
        budget.left()


def test_where_the_ledger_lives(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("PYTRIO_API_KEY", raising=False)
    data = tmp_path / "d"
    assert ledger_path(Config(backend="local", local_data_dir=data)) == data / LOCAL_NAME
    assert ledger_path(Config(backend="local", local_data_dir="temporary")) is None
    assert ledger_path(Config(ledger_file="memory")) is None
    monkeypatch.setenv("PYTRIO_API_KEY", "sk-test-key-000000")
    remote = Config(backend="remote", audit_log=tmp_path / "s" / "audit.jsonl")
    assert ledger_path(remote) == tmp_path / "s" / "ledger-remote.json"


def _run(run_id: str) -> RunState:
    return RunState(
        run_id=run_id,
        client=object(),
        base_model="m",
        rank=8,
        train_mlp=True,
        train_attn=True,
        train_unembed=True,
        seed=None,
    )


async def test_idle_runs_end_and_free_their_slot_unless_busy(tmp_path) -> None:
    ledger = Ledger.open(tmp_path / "ledger.json")
    registry = RunRegistry(ledger=ledger)
    for run_id in ("a", "b", "c"):
        registry.add(_run(run_id))
    registry.add_checkpoint("a", CheckpointRecord("s", "state", "trio://a/weights/s", 4))
    registry.runs["c"].last_used += 1000  # used just now
    async with registry.lock("b"):  # a call is running on b
        ended = registry.end_idle(60.0, now=registry.runs["a"].last_used + 61)
    assert ended == ["a"]
    assert set(registry.runs) == {"b", "c"} and "a" in registry.ended
    # The run is gone, its checkpoint and step are not (and outlive the process).
    assert registry.known_step("trio://a/weights/s") == 4
    with pytest.raises(InvalidInput, match=r"it ended .*resume_training_run from 'trio://a/"):
        registry.get("a")
    assert Ledger.open(tmp_path / "ledger.json").step_of("trio://a/weights/s") == 4
    with registry.reserve_slot(3):
        pass
    assert registry.end_idle(0) == []  # 0: idle runs stay open


def test_text_content_is_a_short_summary() -> None:
    structured = {
        "run_id": "r1",
        "losses": [3.0, 2.0, 1.23456],
        "budget_left": {"steps": 1990, "tokens": 4_999_000},
        "backend": "local",
        "backend_note": "trio-local: " + "x" * 170,
        "samples": [{"text": "a" * 5000}] * 4,
    }
    text = summarise("train_sft", structured)
    assert text.startswith("train_sft: run_id=r1, losses=[3 values, last 1.235]")
    assert "steps=1990" in text and "samples=[4 items]" in text and "x" * 20 not in text
    assert len(text) < 450


@pytest.mark.parametrize(
    ("line", "request_id", "code"),
    [
        ('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}', 1, -32602),
        ('{"jsonrpc":"2.0","id":"x","method":"tools/call","params":3}', "x", -32602),
        ('{"jsonrpc":"2.0","id":2,"method":"a","params":' + "[" * 5000 + "]" * 5000 + "}", 2, None),
        ('{"params":{"id":5},"id":3,"method":"m","jsonrpc":"2.0"', 3, -32700),
        ('{"jsonrpc":"2.0","id":true,"method":"m"}', None, -32600),
        ("[1, 2]", None, -32600),
        ("}{", None, -32700),
    ],
)
def test_a_line_the_sdk_drops_gets_an_error_with_its_id(line, request_id, code) -> None:
    error = rejection(line)
    assert error is not None and error.id == request_id
    assert code is None or error.error.code == code
    assert top_level_id(line) == (request_id if isinstance(request_id, int | str) else None)


@pytest.mark.parametrize(
    "line", ['{"jsonrpc":"2.0","method":"notifications/x","params":[1]}', "", '{"id":1}']
)
def test_notifications_and_responses_get_no_reply(line) -> None:
    assert rejection(line) is None


def test_the_ledger_file_holds_only_counts_and_paths(tmp_path: Path) -> None:
    ledger = Ledger.open(tmp_path / "l.json")
    ledger.set_step("trio://r/weights/s", 12)
    ledger.drop("trio://r/weights/missing")
    data = json.loads((tmp_path / "l.json").read_text())
    assert data == {
        "version": 1,
        "steps_used": 0,
        "tokens_used": 0,
        "checkpoint_steps": {"trio://r/weights/s": 12},
    }


async def test_a_refusal_lists_everything_the_call_needs_at_once(tmp_path) -> None:
    config = Config(
        eager_backend=False,
        audit_log=tmp_path / "a.jsonl",
        read_only=True,
        max_rank=16,
        allowed_models=["Org/Allowed"],
    )
    server, app = build_server(config)
    async with Client(server) as client:
        refused = await client.call_tool(
            "create_training_run", {"rank": 32, "base_model": "Org/Other"}
        )
    text = refused.content[0].text
    assert refused.is_error and text.startswith("3 problems"), text
    assert all(s in text for s in ("read_only", "max_rank", "allowed_models")), text
    app.close()

    budget = Budget(5, 10)
    with pytest.raises(GuardRefusal) as one:
        budget.reserve(6, 1)
    assert "max_session_steps" in str(one.value) and "max_session_tokens" not in str(one.value)
    with pytest.raises(Refusals, match=r"max_session_steps.*max_session_tokens"):
        budget.reserve(6, 11)


def test_a_failed_ledger_write_leaves_the_old_ledger_whole(tmp_path, monkeypatch) -> None:
    path = tmp_path / LOCAL_NAME
    ledger = Ledger.open(path)
    ledger.add_spend(4, 40, flush=True)
    before = path.read_bytes()

    def crash(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("mcp_server.ledger.os.fsync", crash)
    with pytest.raises(LedgerError, match="cannot write the ledger"):
        ledger.add_spend(1, 1, flush=True)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [LOCAL_NAME, LOCAL_NAME + ".lock"]


def test_the_server_does_not_start_on_an_unreadable_ledger(tmp_path, capsys) -> None:
    from mcp_server.cli import main

    path = tmp_path / "ledger.json"
    path.write_text("{not json")
    handlers, level = logging.root.handlers[:], logging.root.level
    try:
        code = main(["--set", f"ledger_file='{path}'", "--audit-log", str(tmp_path / "a.jsonl")])
    finally:  # main() configures the root logger for the process it runs in
        logging.root.handlers[:], logging.root.level = handlers, level
    assert code == 2
    assert str(path) in capsys.readouterr().err
