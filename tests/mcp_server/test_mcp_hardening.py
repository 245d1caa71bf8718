"""Hostile input, secrets and transport faults, without a backend: ids that pose as paths, names
with a trailing newline, loss settings the loss never reads, a planted token-file symlink, a
secret pasted into an identifier, a lone surrogate on the stdio wire, and concurrent reservations
of the session budget and of run slots."""

from __future__ import annotations

import json
import os
import select
import subprocess
import threading
import time
from pathlib import Path

import pytest
from mcp import Client

from mcp_server.budget import Budget
from mcp_server.errors import GuardRefusal
from mcp_server.redact import remember_secret
from mcp_server.runs import RunRegistry, RunState
from mcp_server.transports import resolve_token
from pytrio_facts import LIMITS, LOSSES
from tests.mcp_server.mcp_helpers import TRIO_MCP

pytestmark = pytest.mark.anyio

DATUM = {"model_input": [1, 2], "loss_fn_inputs": {"target_tokens": [2, 3], "weights": [1, 1]}}


async def call(server, name: str, arguments: dict) -> tuple[bool, str]:
    async with Client(server) as client:
        result = await client.call_tool(name, arguments)
    return result.is_error, " ".join(getattr(c, "text", "") for c in result.content)


@pytest.mark.parametrize("run_id", ["x/../..", "../x", "a/b", "run\n", "-rf", ".hidden", "a b"])
@pytest.mark.parametrize(
    ("tool", "extra"),
    [
        ("list_checkpoints", {}),
        ("get_training_run", {}),
        ("save_checkpoint", {"name": "step-1"}),
        ("train_step", {"datums": [DATUM]}),
        ("delete_checkpoint", {"checkpoint": "trio://r/weights/a", "confirm": "x"}),
    ],
)
async def test_run_ids_are_one_plain_segment(make_server, tool, extra, run_id) -> None:
    is_error, text = await call(make_server(), tool, {"run_id": run_id, **extra})
    assert is_error
    assert "`run_id`" in text and "pattern" in text, text


@pytest.mark.parametrize(
    "checkpoint", ["trio://r/../other", "x/../..", "trio://r/./w", "/etc/passwd", "trio://r//w"]
)
async def test_checkpoint_paths_have_no_dot_segments(make_server, checkpoint) -> None:
    is_error, text = await call(make_server(), "resume_training_run", {"checkpoint": checkpoint})
    assert is_error and "`checkpoint`" in text, text


async def test_well_formed_ids_pass_the_schema(make_server) -> None:
    # They reach the guards (and stop there: the run is not open), not the schema check.
    is_error, text = await call(
        make_server(read_only=True), "resume_training_run", {"checkpoint": "trio://ck_1/weights/a"}
    )
    assert is_error and "read-only" in text, text


async def test_checkpoint_name_limit_comes_from_the_sdk_and_can_be_lowered(make_server) -> None:
    longest = "a" * LIMITS.checkpoint_name_max_length
    is_error, text = await call(make_server(), "save_checkpoint", {"run_id": "r", "name": longest})
    assert is_error and "is not open" in text, text  # the name passed; the run is unknown
    is_error, text = await call(
        make_server(max_checkpoint_name_length=20),
        "save_checkpoint",
        {"run_id": "r", "name": "a" * 21},
    )
    assert is_error and "max_checkpoint_name_length = 20" in text, text


async def test_lint_code_filename_must_match_whole(make_server) -> None:
    is_error, text = await call(
        make_server(), "lint_code", {"source": "x = 1\n", "filename": "train.py\n"}
    )
    assert is_error and "filename" in text, text


@pytest.mark.parametrize("loss", [loss.name for loss in LOSSES])
async def test_loss_config_keys_are_those_the_loss_reads(make_server, loss) -> None:
    args = {"run_id": "r", "datums": [DATUM], "loss_fn": loss}
    is_error, text = await call(
        make_server(), "train_step", {**args, "loss_fn_config": {"clip_hgh_threshold": 1.2}}
    )
    assert is_error and "'clip_hgh_threshold' are not used by loss" in text, text
    known = next(fact.config_keys for fact in LOSSES if fact.name == loss)
    if known:
        _, text = await call(
            make_server(), "train_step", {**args, "loss_fn_config": dict.fromkeys(known, 0.5)}
        )
        assert "loss_fn_config" not in text, text


async def test_a_secret_inside_an_identifier_never_comes_back(make_server, tmp_path) -> None:
    secret = "sk-live-0123456789abcdefSECRET"
    remember_secret(secret)
    is_error, text = await call(make_server(), "list_checkpoints", {"run_id": secret})
    assert is_error
    is_error, text2 = await call(make_server(), "save_checkpoint", {"run_id": secret, "name": "a"})
    assert is_error and "[redacted]" in text2
    log = (tmp_path / "audit.jsonl").read_text()
    assert secret not in text + text2 + log
    assert "[redacted]" in log


def test_config_rank_bounds_are_the_sdks(tmp_path: Path) -> None:
    from mcp_server.config import ConfigError, load_config

    config = load_config(cwd=tmp_path)
    assert (config.min_rank, config.max_rank) == (LIMITS.lora_rank_min, LIMITS.lora_rank_max)
    with pytest.raises(ConfigError, match="max_rank: Input should be less than or equal to 64"):
        load_config(cwd=tmp_path, overrides={"max_rank": 4096})


def test_token_file_never_follows_a_planted_symlink(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("TRIO_MCP_TOKEN", raising=False)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    victim.chmod(0o644)
    state = tmp_path / "state"
    state.mkdir()
    token_file = state / "http-token"
    token_file.symlink_to(victim)
    (state / "http-token.tmp").symlink_to(victim)  # the old fixed temporary name
    token = resolve_token(token_file)
    assert victim.read_text() == "precious\n"
    assert not token_file.is_symlink()
    assert token_file.read_text().strip() == token
    assert token_file.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in state.iterdir() if p.name.startswith(".http-token.")] == []


def test_budget_reservations_hold_under_threads() -> None:
    budget = Budget(max_steps=3, max_tokens=10**9)
    granted: list[int] = []
    start = threading.Barrier(15)

    def worker(index: int) -> None:
        start.wait()
        try:
            hold = budget.reserve(1, 10)
        except GuardRefusal:
            return
        time.sleep(0.01)  # the backend call
        hold.spend(1, 10)
        hold.release()
        granted.append(index)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(15)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(granted) == 3
    assert budget.left().steps == 0 and budget.steps_used == 3 and budget.steps_held == 0


async def test_run_slots_hold_under_concurrent_opens() -> None:
    import anyio

    registry = RunRegistry()
    opened: list[str] = []
    refused: list[str] = []

    async def open_run(index: int) -> None:
        try:
            with registry.reserve_slot(2) as slot:
                await anyio.sleep(0.01)  # the backend call
                if index == 0:
                    raise RuntimeError("backend failed")
                slot.fill(RunState(f"r{index}", None, "m", 8, True, True, True, None))
                opened.append(f"r{index}")
        except GuardRefusal:
            refused.append(f"r{index}")
        except RuntimeError:
            pass

    async with anyio.create_task_group() as group:
        for index in range(5):
            group.start_soon(open_run, index)
    assert len(opened) == 1 and len(refused) == 3  # r0 held a slot, failed, and gave it back
    assert registry.opening == 0 and list(registry.runs) == opened


def _read_reply(process: subprocess.Popen, want_id: int, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    buffer = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 0.2)
        if not ready:
            continue
        chunk = os.read(process.stdout.fileno(), 65536)
        if not chunk:
            break
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            message = json.loads(line)
            if message.get("id") == want_id:
                return message
    raise AssertionError(f"no reply to request {want_id} within {timeout} s")


def test_a_lone_surrogate_and_malformed_requests_on_stdio_are_answered(tmp_path) -> None:
    process = subprocess.Popen(
        [TRIO_MCP, "--set", "eager_backend=false", "--audit-log", str(tmp_path / "a.jsonl")],
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:

        def send(text: str) -> None:
            process.stdin.write(text.encode() + b"\n")
            process.stdin.flush()

        send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "raw", "version": "0"},
                    },
                }
            )
        )
        assert "result" in _read_reply(process, 1, 60)
        send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        # json.dumps would escape the surrogate the same way; written by hand to be explicit.
        send(
            '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"lint_code",'
            '"arguments":{"source":"x = \\"\\ud800\\"\\n"}}}'
        )
        reply = _read_reply(process, 2, 60)
        assert reply["result"]["isError"] is False, reply
        send(
            '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_models",'
            '"arguments":{"\\udc00":1}}}'
        )
        reply = _read_reply(process, 3, 60)
        assert reply["result"]["isError"] is True, reply
        assert "is not an argument of list_models" in reply["result"]["content"][0]["text"]

        # Lines the SDK's reader cannot parse as a message: each request still gets its error.
        deep = "[" * 20_000 + "]" * 20_000
        for request_id, line, code in [
            (4, '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":[1,2]}', -32602),
            ("five", '{"jsonrpc":"2.0","id":"five","method":"tools/list","params":5}', -32602),
            (6, '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":' + deep + "}", -32700),
            (7, '{"jsonrpc":"2.0","method":"ping","params":{"a":' + deep + '},"id":7}', -32700),
            (8, '{"jsonrpc":"2.0","id":8,"method":"ping","params":{}', -32700),
        ]:
            send(line)
            reply = _read_reply(process, request_id, 30)
            assert reply["error"]["code"] == code, reply
        send("not json at all")
        send('{"jsonrpc":"2.0","id":9,"method":"ping"}')
        reply = _read_reply(process, 9, 30)  # still serving, in order
        assert reply["result"] == {}, reply
    finally:
        process.kill()
        process.wait()


@pytest.mark.parametrize("value", ["inf", "-inf", "nan"])
@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("train_step", {"run_id": "r", "datums": [DATUM], "adam": {"grad_clip_norm": None}}),
        ("train_step", {"run_id": "r", "datums": [DATUM], "loss_fn_config": {"beta": None}}),
        (
            "train_sft",
            {
                "run_id": "r",
                "examples": [{"prompt": "a", "completion": "b"}],
                "learning_rate": None,
            },
        ),
        ("sample", {"model": "m", "prompt": "hi", "temperature": None}),
    ],
)
async def test_non_finite_numbers_are_refused_at_the_edge(make_server, tool, arguments, value):
    def fill(node):
        if isinstance(node, dict):
            return {k: float(value) if v is None else fill(v) for k, v in node.items()}
        if isinstance(node, list):
            return [fill(item) for item in node]
        return node

    def holes(node):
        if isinstance(node, dict):
            for key, item in node.items():
                yield from [key] if item is None else holes(item)
        elif isinstance(node, list):
            for item in node:
                yield from holes(item)

    is_error, text = await call(make_server(), tool, fill(arguments))
    assert is_error and "invalid arguments" in text, text
    assert all(f"{name}`" in text for name in holes(arguments)), text
