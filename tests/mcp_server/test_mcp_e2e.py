"""End to end: the official `mcp` client drives the real `trio-mcp` console script, over stdio and
over streamable HTTP, against trio-local (the real SDK over real HTTP, a tiny model that trains).

An agent-like session creates a run, trains 20 SFT steps with a falling loss, samples the trained
completion, saves, resumes, lints a snippet, plots, and deletes with confirmation. A bad-input
suite then sends every tool missing, wrong-typed, out-of-range, oversized and hostile arguments.
"""

from __future__ import annotations

import base64
import json

import mcp_types
import pytest
from mcp import Client

from tests.mcp_server.mcp_helpers import authorised_client, http_server, stdio_params

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

EXAMPLES = [
    {"prompt": "Q: What is the capital of France?\nA:", "completion": " Paris."},
    {"prompt": "Q: What colour is the sky?\nA:", "completion": " Blue."},
]
SNIPPET = "import pytrio as trio\nparams = trio.SamplingParams(max_new_tokens=16)\n"


async def agent_session(client: Client, confirm_by: str) -> None:
    models = await client.call_tool("list_models", {})
    assert not models.is_error, models.content
    assert models.structured_content["backend"] == "local"
    assert "stand-in" in models.structured_content["backend_note"]

    created = await client.call_tool("create_training_run", {"rank": 16, "seed": 0})
    assert not created.is_error, created.content
    run_id = created.structured_content["run_id"]

    progress: list[tuple[float, float | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total))

    trained = await client.call_tool(
        "train_sft",
        {"run_id": run_id, "examples": EXAMPLES, "steps": 20, "learning_rate": 5e-3},
        progress_callback=on_progress,
    )
    assert not trained.is_error, trained.content
    result = trained.structured_content
    losses = result["losses"]
    assert len(losses) == 20 and result["steps"] == 20
    assert losses[-1] < losses[0] / 5, losses
    assert result["tokens"] > 0 and result["trained_tokens"] > 0
    assert result["budget_left"]["steps"] == 2000 - 20
    assert [p[0] for p in progress] == list(range(1, 21))

    sampled = await client.call_tool(
        "sample",
        {"model": run_id, "prompt": EXAMPLES[0]["prompt"], "max_tokens": 8, "temperature": 0},
    )
    assert not sampled.is_error, sampled.content
    assert sampled.structured_content["samples"][0]["text"].startswith(" Paris.")

    # The token-level escape hatch on the same run: one cross-entropy step on hand-made tokens.
    datum = {
        "model_input": [9707, 1879, 13],
        "loss_fn_inputs": {"target_tokens": [1879, 13, 151645], "weights": [0, 1, 1]},
    }
    stepped = await client.call_tool(
        "train_step", {"run_id": run_id, "datums": [datum], "adam": {"learning_rate": 1e-4}}
    )
    assert not stepped.is_error, stepped.content
    assert stepped.structured_content["step"] == 21
    assert stepped.structured_content["metrics"]["loss_sum"] > 0

    weights = await client.call_tool(
        "save_checkpoint", {"run_id": run_id, "name": "for-sampling", "kind": "sampler"}
    )
    assert not weights.is_error, weights.content
    from_file = await client.call_tool(
        "sample",
        {
            "model": weights.structured_content["path"],
            "prompt": EXAMPLES[1]["prompt"],
            "max_tokens": 8,
            "temperature": 0,
            "return_logprobs": True,
        },
    )
    assert from_file.structured_content["model_kind"] == "checkpoint"
    completion = from_file.structured_content["samples"][0]
    assert completion["text"].startswith(" Blue.")
    assert len(completion["logprobs"]) == len(completion["tokens"])
    assert all(value <= 0 for value in completion["logprobs"])

    saved = await client.call_tool("save_checkpoint", {"run_id": run_id, "name": "step-20"})
    assert not saved.is_error, saved.content
    path = saved.structured_content["path"]

    resumed = await client.call_tool("resume_training_run", {"checkpoint": path})
    assert not resumed.is_error, resumed.content
    new_run = resumed.structured_content["run_id"]
    reopened = await client.call_tool("get_training_run", {"run_id": new_run})
    assert reopened.structured_content["resumed_from"] == path
    assert reopened.structured_content["step"] == 21

    linted = await client.call_tool("lint_code", {"source": SNIPPET, "fix": True})
    assert [f["code"] for f in linted.structured_content["fixed"]] == ["PTR201"]

    runs = await client.call_tool("list_training_runs", {"limit": 10})
    listed_runs = {r["run_id"]: r for r in runs.structured_content["runs"]}
    assert listed_runs[run_id]["open_in_session"] and listed_runs[run_id]["step"] == 21
    assert listed_runs[new_run]["lora_rank"] == 16

    plotted = await client.call_tool("plot_loss", {"run_id": run_id})
    assert not plotted.is_error, plotted.content
    image = next(c for c in plotted.content if c.type == "image")
    assert base64.b64decode(image.data).startswith(b"\x89PNG")
    assert plotted.structured_content["steps"] == 21
    assert plotted.structured_content["backend"] == "local"

    arguments = {"checkpoint": path}
    if confirm_by == "confirm":
        arguments["confirm"] = path
    deleted = await client.call_tool("delete_checkpoint", arguments)
    assert not deleted.is_error, deleted.content
    assert deleted.structured_content["confirmed_by"] == confirm_by
    listed = await client.call_tool("list_checkpoints", {"run_id": run_id})
    assert path not in [c["path"] for c in listed.structured_content["checkpoints"]]

    budget = await client.read_resource("trio-mcp://budget")
    assert json.loads(budget.contents[0].text)["steps"] == 2000 - 21


OVERSIZED = "x" * 500_001
BAD_CALLS = [
    ("list_models", {"api_key": "sk-live-1234567890"}, "api_key"),
    ("list_training_runs", {"limit": -1}, "limit"),
    ("list_training_runs", {"limit": "ten"}, "limit"),
    ("list_training_runs", {"offset": 10**12}, "offset"),
    ("get_training_run", {}, "run_id"),
    ("get_training_run", {"run_id": 5}, "run_id"),
    ("get_training_run", {"run_id": "../../etc/passwd"}, "run_id"),
    ("get_training_run", {"run_id": "a" * 5000}, "run_id"),
    ("list_checkpoints", {"run_id": "$(rm -rf /)"}, "run_id"),
    ("create_training_run", {"rank": 0}, "rank"),
    ("create_training_run", {"rank": [16]}, "rank"),
    ("create_training_run", {"base_model": "--help"}, "base_model"),
    ("create_training_run", {"seed": -1}, "seed"),
    ("train_sft", {"run_id": "r1"}, "examples"),
    ("train_sft", {"run_id": "r1", "examples": []}, "examples"),
    ("train_sft", {"run_id": "r1", "examples": "Paris"}, "examples"),
    ("train_sft", {"run_id": "r1", "examples": EXAMPLES, "learning_rate": 1e9}, "learning_rate"),
    ("train_sft", {"run_id": "r1", "examples": EXAMPLES, "learning_rate": -1}, "learning_rate"),
    ("train_sft", {"run_id": "r1", "examples": EXAMPLES, "steps": 10**9}, "steps"),
    (
        "train_sft",
        {"run_id": "r1", "examples": [{"prompt": OVERSIZED, "completion": "x"}]},
        "prompt",
    ),
    ("train_sft", {"run_id": "nope", "examples": EXAMPLES, "steps": 1}, "run_id"),
    ("train_step", {"run_id": "r1", "datums": []}, "datums"),
    ("train_step", {"run_id": "r1", "datums": [{"model_input": ["a"]}]}, "model_input"),
    ("train_step", {"run_id": "r1", "datums": [], "loss_fn": "mse"}, "loss_fn"),
    ("train_step", {"run_id": "r1", "datums": [], "adam": {"learning_rate": -1}}, "learning_rate"),
    ("sample", {"model": "m"}, "prompt"),
    (
        "sample",
        {"model": "m", "prompt": "a", "messages": [{"role": "user", "content": "a"}]},
        "prompt",
    ),
    ("sample", {"model": "m", "prompt": "a", "max_tokens": 0}, "max_tokens"),
    ("sample", {"model": "m", "prompt": "a", "temperature": 50}, "temperature"),
    ("sample", {"model": "/etc/passwd", "prompt": "a"}, "model"),
    ("sample", {"model": "not-a-model", "prompt": "a"}, "model"),
    ("sample", {"model": "m", "prompts": []}, "prompts"),
    ("sample", {"model": "m", "prompts": [""]}, "prompts"),
    ("train_on_rewards", {"run_id": "r1", "rewards": {}}, "rewards"),
    ("train_on_rewards", {"run_id": "r1", "rewards": {"ro-0123456789abcdef": 1e9}}, "rewards"),
    ("train_on_rewards", {"run_id": "r1", "rewards": {"x" * 5000: 1.0}}, "rewards"),
    (
        "train_on_rewards",
        {"run_id": "r1", "rewards": {"ro-0123456789abcdef": 1}, "loss_fn": "cross_entropy"},
        "loss_fn",
    ),
    ("train_on_rewards", {"run_id": "r1", "rewards": {"ro-0123456789abcdef": 1}}, "r1"),
    ("evaluate", {"model": "m"}, "examples"),
    ("evaluate", {"model": "m", "examples": [{"prompt": "a"}]}, "completion"),
    ("evaluate", {"model": "m", "examples": EXAMPLES, "max_tokens": 0}, "max_tokens"),
    ("evaluate", {"model": "not-a-model", "examples": EXAMPLES}, "model"),
    ("train_sft", {"run_id": "r1", "examples": EXAMPLES, "lr_schedule": "exp"}, "lr_schedule"),
    ("train_sft", {"run_id": "r1", "examples": EXAMPLES, "held_out": []}, "held_out"),
    ("save_checkpoint", {"run_id": "r1", "name": "../../x"}, "name"),
    ("save_checkpoint", {"run_id": "r1", "name": "a", "kind": "weights"}, "kind"),
    ("resume_training_run", {"checkpoint": ""}, "checkpoint"),
    ("resume_training_run", {"checkpoint": "/etc/passwd"}, "checkpoint"),
    ("resume_training_run", {"checkpoint": "c", "with_optimizer": [1]}, "with_optimizer"),
    ("end_training_run", {}, "run_id"),
    ("end_training_run", {"run_id": "nope"}, "run_id"),
    ("end_training_run", {"run_id": "a/b"}, "run_id"),
    ("list_checkpoints", {"include_temporary": "maybe"}, "include_temporary"),
    ("delete_checkpoint", {"checkpoint": "not-a-path"}, "checkpoint"),
    ("delete_checkpoint", {}, "checkpoint"),
    ("delete_checkpoint", {"checkpoint": 5}, "checkpoint"),
    ("lint_code", {}, "source"),
    ("lint_code", {"source": OVERSIZED}, "source"),
    ("lint_code", {"source": "x = 1", "filename": "/etc/passwd"}, "filename"),
    ("lint_code", {"source": "x = 1", "fix": "maybe"}, "fix"),
    ("plot_loss", {"run_id": "nope"}, "run_id"),
    ("plot_loss", {"run_id": "x y"}, "run_id"),
]


async def bad_input_suite(client: Client) -> None:
    tools = {tool.name for tool in (await client.list_tools()).tools}
    assert tools <= {tool for tool, _, _ in BAD_CALLS}, "every tool gets bad input"
    for tool, arguments, field in BAD_CALLS:
        result = await client.call_tool(tool, arguments)
        text = " ".join(getattr(c, "text", "") for c in result.content)
        assert result.is_error, (tool, arguments)
        assert field in text, (tool, field, text[:300])
        assert "sk-live-1234567890" not in text
        assert len(text) < 3000, (tool, "error messages stay short")
    # ...and the server still answers.
    alive = await client.call_tool("list_models", {})
    assert not alive.is_error


async def chat_round_trip(client: Client) -> None:
    """Chat examples go through the model's own chat template, and so does sampling them."""
    created = await client.call_tool("create_training_run", {"rank": 8})
    run_id = created.structured_content["run_id"]
    chat = [
        {"role": "user", "content": "Capital of France?"},
        {"role": "assistant", "content": "Paris."},
    ]
    trained = await client.call_tool(
        "train_sft", {"run_id": run_id, "examples": [{"messages": chat}], "steps": 1}
    )
    assert not trained.is_error, trained.content
    # "Paris", ".", "<|im_end|>": only the assistant's turn carries weight.
    assert trained.structured_content["trained_tokens"] == 3
    sampled = await client.call_tool(
        "sample", {"model": run_id, "messages": chat[:1], "max_tokens": 4, "temperature": 0}
    )
    assert not sampled.is_error, sampled.content
    assert len(sampled.structured_content["samples"][0]["tokens"]) <= 4
    base = await client.call_tool(
        "sample",
        {"model": "Qwen/Qwen3-4B-Instruct-2507", "prompt": "Hello", "max_tokens": 2, "seed": 1},
    )
    assert not base.is_error, base.content
    assert base.structured_content["model_kind"] == "base_model"


async def divergence_stops(client: Client) -> None:
    created = await client.call_tool("create_training_run", {"rank": 16, "seed": 0})
    run_id = created.structured_content["run_id"]
    result = await client.call_tool(
        "train_sft",
        {"run_id": run_id, "examples": EXAMPLES[:1], "steps": 12, "learning_rate": 1.0},
    )
    assert result.is_error
    text = result.content[0].text
    assert "train_sft stopped after" in text and "of 12 steps" in text, text
    assert "resume_training_run" in text and "lower learning_rate" in text
    state = await client.call_tool("get_training_run", {"run_id": run_id})
    assert state.structured_content["step"] < 12


async def test_stdio_session_then_bad_input(tmp_path) -> None:
    audit = tmp_path / "audit.jsonl"
    params = stdio_params(
        "--backend",
        "local",
        "--audit-log",
        str(audit),
        "--set",
        "max_learning_rate=1.0",
        cwd=tmp_path,
    )
    async with Client(params, read_timeout_seconds=600) as client:
        await agent_session(client, confirm_by="confirm")
        await bad_input_suite(client)
        await divergence_stops(client)
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    assert lines[0]["tool"] == "list_models" and lines[0]["outcome"] == "ok"
    assert "sk-live-1234567890" not in audit.read_text()
    assert any(e["tool"] == "train_sft" and e["budget_after"]["steps"] == 1980 for e in lines)


async def test_http_session_with_elicitation(tmp_path) -> None:
    asked: list[str] = []

    async def accept(context, params):
        asked.append(params.message)
        return mcp_types.ElicitResult(action="accept", content={"delete": True})

    audit = str(tmp_path / "audit.jsonl")
    with http_server("--backend", "local", "--audit-log", audit, cwd=tmp_path) as (url, log):
        async with authorised_client(url, elicitation_callback=accept) as client:
            await agent_session(client, confirm_by="user")
            await chat_round_trip(client)
    assert len(asked) == 1 and "step-20" in asked[0]
    assert "Traceback" not in log.read_text()
