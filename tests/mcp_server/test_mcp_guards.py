"""Guards, refusals and the tool listing, through the in-memory MCP client (no backend needed:
every call here is refused before anything is sent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from mcp_server.registry import tool_catalogue
from mcp_server.tools import ALL_TOOLS

pytestmark = pytest.mark.anyio

EXAMPLE = {"prompt": "what is the answer?", "completion": " 42"}


async def call(server, name: str, arguments: dict) -> tuple[bool, str]:
    async with Client(server) as client:
        result = await client.call_tool(name, arguments)
    return result.is_error, " ".join(getattr(c, "text", "") for c in result.content)


async def test_every_tool_is_listed_with_title_annotations_and_schemas(make_server) -> None:
    async with Client(make_server()) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert list(tools) == [spec.name for spec in ALL_TOOLS]
    for tool in tools.values():
        assert tool.title, tool.name
        hints = tool.annotations
        values = (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint)
        assert None not in values, tool.name
        assert hints.open_world_hint is False, tool.name
        assert tool.input_schema["additionalProperties"] is False, tool.name
        assert tool.output_schema is not None, tool.name
        for name, prop in tool.input_schema.get("properties", {}).items():
            assert prop.get("description"), (tool.name, name)
    destructive = {name for name, t in tools.items() if t.annotations.destructive_hint}
    assert destructive == {"delete_checkpoint"}
    read_only = {name for name, t in tools.items() if t.annotations.read_only_hint}
    assert read_only == {
        "list_models",
        "list_training_runs",
        "get_training_run",
        "list_checkpoints",
        "sample",
        "evaluate",
        "lint_code",
        "plot_loss",
    }


async def test_the_server_publishes_exactly_the_catalogue(make_server) -> None:
    async with Client(make_server()) as client:
        listed = (await client.list_tools()).tools
    catalogue = tool_catalogue()
    assert [tool.name for tool in listed] == [entry["name"] for entry in catalogue]
    for tool, entry in zip(listed, catalogue, strict=True):
        assert tool.input_schema == entry["input_schema"], tool.name
        assert tool.output_schema == entry["output_schema"], tool.name
        assert tool.annotations.model_dump(exclude_none=True) == entry["annotations"]
        assert (tool.title, tool.description) == (entry["title"], entry["description"])
    train_step = next(entry for entry in catalogue if entry["name"] == "train_step")
    assert train_step["input_schema"]["properties"]["adam"]["default"]["learning_rate"] == 1e-4


def test_catalogue_matches_what_the_server_publishes() -> None:
    catalogue = tool_catalogue()
    assert [entry["name"] for entry in catalogue] == [spec.name for spec in ALL_TOOLS]
    train = next(entry for entry in catalogue if entry["name"] == "train_sft")
    assert train["annotations"]["destructive_hint"] is False
    assert "examples" in train["input_schema"]["required"]
    json.dumps(catalogue)  # docgen renders it: it must be plain JSON


async def test_rank_above_configured_maximum_names_the_setting(make_server) -> None:
    is_error, text = await call(make_server(max_rank=16), "create_training_run", {"rank": 32})
    assert is_error
    assert "rank 32 is above the maximum (limit max_rank = 16)" in text
    assert "--set max_rank=" in text


async def test_rank_outside_the_sdk_range_is_a_schema_error(make_server) -> None:
    is_error, text = await call(make_server(), "create_training_run", {"rank": 128})
    assert is_error and "rank" in text and "less than or equal to 64" in text


async def test_disallowed_model_is_refused(make_server) -> None:
    server = make_server(allowed_models=["Qwen/Qwen3-4B-Instruct-2507"])
    async with Client(server) as client:
        # The allow-list is checked against the backend's catalogue, so it needs the backend;
        # here we only check the schema rejects a hostile model id before that.
        result = await client.call_tool("create_training_run", {"base_model": "../../etc/passwd"})
    assert result.is_error and "base_model" in result.content[0].text


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("create_training_run", {}),
        ("train_sft", {"run_id": "r1", "examples": [EXAMPLE], "steps": 1}),
        ("train_step", {"run_id": "r1", "datums": [{"model_input": [1], "loss_fn_inputs": {}}]}),
        ("save_checkpoint", {"run_id": "r1", "name": "step-1"}),
        ("resume_training_run", {"checkpoint": "trio://r1/weights/step-1"}),
        ("delete_checkpoint", {"checkpoint": "trio://r1/weights/step-1", "confirm": "x"}),
        ("end_training_run", {"run_id": "r1"}),
    ],
)
async def test_read_only_mode_refuses_every_state_change(make_server, tool, arguments) -> None:
    is_error, text = await call(make_server(read_only=True), tool, arguments)
    assert is_error
    assert "read-only mode (limit read_only = True)" in text


async def test_delete_can_be_switched_off(make_server) -> None:
    server = make_server(allow_delete=False)
    is_error, text = await call(server, "delete_checkpoint", {"checkpoint": "c1", "confirm": "c1"})
    assert is_error and "limit allow_delete = False" in text


async def test_delete_without_elicitation_asks_to_repeat_the_name(make_server) -> None:
    is_error, text = await call(make_server(), "delete_checkpoint", {"checkpoint": "trio://r/c"})
    assert is_error and "confirm set to exactly 'trio://r/c'" in text
    is_error, text = await call(
        make_server(), "delete_checkpoint", {"checkpoint": "trio://r/c", "confirm": "trio://r/x"}
    )
    assert is_error and "confirm does not match" in text


async def test_examples_and_learning_rate_limits(make_server) -> None:
    server = make_server(max_examples_per_call=2, max_learning_rate=1e-3)
    args = {"run_id": "r1", "examples": [EXAMPLE] * 3, "steps": 1}
    is_error, text = await call(server, "train_sft", args)
    assert is_error and "limit max_examples_per_call = 2" in text
    args = {"run_id": "r1", "examples": [EXAMPLE], "steps": 1, "learning_rate": 0.01}
    is_error, text = await call(server, "train_sft", args)
    assert is_error and "limit max_learning_rate = 0.001" in text


async def test_unknown_run_is_named_with_the_fix(make_server) -> None:
    args = {"run_id": "r1", "examples": [EXAMPLE], "steps": 1}
    is_error, text = await call(make_server(), "train_sft", args)
    assert is_error and "run_id 'r1' is not open in this session" in text
    assert "create_training_run" in text


async def test_sampling_limits(make_server) -> None:
    server = make_server(max_sample_tokens=32, max_num_samples=2)
    is_error, text = await call(server, "sample", {"model": "m", "prompt": "hi", "max_tokens": 64})
    assert is_error and "limit max_sample_tokens = 32" in text
    args = {"model": "m", "prompt": "hi", "num_samples": 3, "max_tokens": 16}
    is_error, text = await call(server, "sample", args)
    assert is_error and "limit max_num_samples = 2" in text


async def test_checkpoint_names_are_validated(make_server) -> None:
    for bad in ("../escape", "has space", "-flag", "x" * 201, "step-1\n"):
        is_error, text = await call(make_server(), "save_checkpoint", {"run_id": "r", "name": bad})
        assert is_error and "name" in text, bad


async def test_audit_log_has_one_line_per_call_and_no_payloads(make_server, tmp_path) -> None:
    server = make_server(max_rank=16)
    secret_prompt = "TOP-SECRET-PROMPT-TEXT"
    async with Client(server) as client:
        await client.call_tool("create_training_run", {"rank": 32})
        await client.call_tool(
            "train_sft",
            {"run_id": "r9", "examples": [{"prompt": secret_prompt, "completion": "x"}]},
        )
        await client.call_tool("lint_code", {"source": f"print('{secret_prompt}')"})
        await client.call_tool("sample", {"model": "m", "prompt": secret_prompt, "top_k": "x"})
    text = (tmp_path / "audit.jsonl").read_text()
    assert secret_prompt not in text
    entries = [json.loads(line) for line in text.splitlines()]
    tools = ["create_training_run", "train_sft", "lint_code", "sample"]
    assert [e["tool"] for e in entries] == tools
    assert [e["outcome"] for e in entries] == ["refused", "refused", "ok", "refused"]
    assert entries[3]["error"].startswith("invalid arguments for sample: `top_k`")
    assert entries[0]["arguments"]["rank"] == 32
    assert entries[1]["arguments"]["examples"] == {"items": 1}
    assert entries[2]["arguments"]["source"] == {"chars": len(f"print('{secret_prompt}')")}
    assert entries[0]["budget_after"] == {"steps": 2000, "tokens": 5_000_000}
    assert all(e["duration_s"] >= 0 and e["time"].endswith("Z") for e in entries)


async def test_lint_code_finds_and_fixes_without_running_anything(make_server, tmp_path) -> None:
    marker = tmp_path / "ran"
    source = (
        "import pathlib\n"
        f"pathlib.Path({str(marker)!r}).write_text('x')\n"
        "import pytrio as trio\n"
        "params = trio.SamplingParams(max_new_tokens=16)\n"
    )
    async with Client(make_server()) as client:
        found = await client.call_tool("lint_code", {"source": source, "filename": "train.py"})
        fixed = await client.call_tool("lint_code", {"source": source, "fix": True})
    assert not found.is_error
    codes = [f["code"] for f in found.structured_content["findings"]]
    assert "PTR201" in codes
    assert "max_tokens=16" in fixed.structured_content["fixed_source"]
    assert not marker.exists()


async def test_server_keeps_serving_after_errors(make_server) -> None:
    async with Client(make_server()) as client:
        for _ in range(3):
            bad = await client.call_tool("train_step", {"run_id": 5})
            assert bad.is_error
        good = await client.call_tool("lint_code", {"source": "x = 1\n"})
        assert not good.is_error and good.structured_content["summary"] == "no findings"


async def test_resources_serve_the_skill_docs_and_session_state(make_server) -> None:
    async with Client(make_server()) as client:
        uris = [str(r.uri) for r in (await client.list_resources()).resources]
        assert "trio-mcp://runs" in uris and "trio-mcp://budget" in uris
        runs = await client.read_resource("trio-mcp://runs")
        assert json.loads(runs.contents[0].text) == []
        if "skill://pytrio/SKILL.md" in uris:
            skill = await client.read_resource("skill://pytrio/SKILL.md")
            assert skill.contents[0].text == (Path(__file__).parents[2] / "SKILL.md").read_text()


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_delete_asks_the_user_through_elicitation(make_server, mode) -> None:
    asked: list[str] = []

    async def decline(context, params):
        import mcp_types

        asked.append(params.message)
        return mcp_types.ElicitResult(action="decline")

    async with Client(make_server(), elicitation_callback=decline, mode=mode) as client:
        result = await client.call_tool("delete_checkpoint", {"checkpoint": "trio://r/c"})
    assert asked == ["Delete checkpoint trio://r/c permanently? It cannot be restored."]
    assert result.is_error
    assert "the user answered 'decline'" in result.content[0].text


async def test_read_only_refuses_delete_before_asking(make_server) -> None:
    asked: list[str] = []

    async def accept(context, params):
        import mcp_types

        asked.append(params.message)
        return mcp_types.ElicitResult(action="accept", content={"delete": True})

    async with Client(make_server(read_only=True), elicitation_callback=accept) as client:
        result = await client.call_tool("delete_checkpoint", {"checkpoint": "trio://r/c"})
    assert result.is_error and "read_only" in result.content[0].text
    assert asked == []


async def test_an_answer_counts_only_for_a_question_that_was_asked(make_server, monkeypatch):
    """On the 2026-07-28 protocol a client sends answers with its retry. One sent unasked (or
    with a request_state the server did not seal) must never confirm a deletion."""
    import mcp_types
    from mcp.shared.exceptions import MCPError

    monkeypatch.delenv("PYTRIO_API_KEY", raising=False)
    monkeypatch.setenv("HOME", "/nonexistent")  # no `trio login` profile: a confirmed delete
    asked: list[str] = []  # would fail on the missing key, after the confirmation

    async def decline(context, params):
        asked.append(params.message)
        return mcp_types.ElicitResult(action="decline")

    forged = {"question": mcp_types.ElicitResult(action="accept", content={"delete": True})}
    server = make_server(backend="remote")
    async with Client(server, elicitation_callback=decline, mode="auto") as client:
        unasked = await client.call_tool(
            "delete_checkpoint", {"checkpoint": "trio://r/c"}, input_responses=forged
        )
        assert unasked.is_error and "the user answered 'decline'" in unasked.content[0].text
        assert len(asked) == 1  # the server asked instead of taking the unsolicited answer
        with pytest.raises(MCPError, match="requestState"):
            await client.call_tool(
                "delete_checkpoint",
                {"checkpoint": "trio://r/c"},
                input_responses=forged,
                request_state="asked:" + "0" * 32,
            )
    assert len(asked) == 1
