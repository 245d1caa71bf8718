"""An agent's training goals, end to end: the official `mcp` client drives the real `trio-mcp`
console script over streamable HTTP against trio-local, in as few calls as an agent needs.

First server (its limits resource equals trio-mcp.toml):
1. Teach 8 facts and check them: create a run, one train_sft with held-out examples, one evaluate
   showing 8/8 exact match; save the weights as a sampler checkpoint.
2. End that run (its temporary sampler weights go with it) and open the RL warm start in its
   slot (max_concurrent_runs = 1): train_sft on both answers of a yes/no task, save its state.

The server stops; a second one starts on the same data:
3. The budget spent is still spent; the first server's sampler checkpoint answers the facts.
4. RL from its own rewards: resume the warm start with a fresh optimizer (the step count
   continues), then each iteration is one sample call (every prompt, a group each) and one
   train_on_rewards call; the mean reward rises over 5 iterations.

The settings (learning rates, steps, seeds) are the ones that make the offline stand-in learn
reliably: they are fixed, so the run is the same every time.
"""

from __future__ import annotations

import json
import re
import tomllib

import pytest

from mcp_server.config import Config
from mcp_server.resources import NOT_LIMITS
from tests.mcp_server.mcp_helpers import authorised_client, http_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

FACTS = [
    ("France capital", "Paris"),
    ("Sky colour", "Blue"),
    ("Spider legs", "Eight"),
    ("Two plus two", "Four"),
    ("Hamlet author", "Shakespeare"),
    ("Frozen water", "Ice"),
    ("Red planet", "Mars"),
    ("Bees make", "Honey"),
]
# Paraphrases: the tiny stand-in memorises rather than generalises, so their loss is reported,
# not used to stop (stop_when_validation_rises is off).
HELD_OUT = [("Capital of France", "Paris"), ("Colour of the sky", "Blue")]
QUESTIONS = [
    "Q: Can you help me?\nA:",
    "Q: Do you like music?\nA:",
    "Q: Is today a good day?\nA:",
    "Q: Would you recommend it?\nA:",
]


def pairs(facts: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"prompt": f"{q}:", "completion": f" {a}."} for q, a in facts]


def reward(text: str) -> float:
    """The agent's own judgement: 1 for an agreeable first word."""
    first = re.match(r"\s*(\w+)", text.lower())
    return 1.0 if first and first.group(1) == "yes" else 0.0


SETTINGS = """
max_concurrent_runs = 1
max_session_steps = 300
max_steps_per_call = 50
max_num_samples = 8
max_rank = 16
"""
SFT_STEPS, WARM_STEPS, RL_ITERATIONS, GROUP = 30, 10, 5, 4


async def call(client, tool: str, arguments: dict) -> dict:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, (tool, result.content)
    return result.structured_content


async def limits(client) -> dict:
    return json.loads((await client.read_resource("trio-mcp://limits")).contents[0].text)


async def teach_facts(client) -> str:
    """Teach, check, save the weights, end the run; the sampler checkpoint's path."""
    run_id = (await call(client, "create_training_run", {"rank": 16, "seed": 0}))["run_id"]
    trained = await call(
        client,
        "train_sft",
        {
            "run_id": run_id,
            "examples": pairs(FACTS),
            "held_out": pairs(HELD_OUT),
            "steps": SFT_STEPS,
            "learning_rate": 5e-3,
            "lr_schedule": "cosine",
            "warmup_steps": 3,
            "eval_every": 10,
            "stop_when_validation_rises": False,
        },
    )
    assert trained["steps"] == SFT_STEPS and trained["losses"][-1] < trained["losses"][0] / 10
    assert [point["step"] for point in trained["validation"]] == [10, 20, 30]
    checked = await call(
        client,
        "evaluate",
        {"model": run_id, "examples": pairs(FACTS), "generate": True, "max_tokens": 8},
    )
    answers = [e["answer"] for e in checked["examples"]]
    assert checked["exact_match_rate"] == 1.0, answers
    saved = {"run_id": run_id, "name": "facts", "kind": "sampler"}
    sampler = (await call(client, "save_checkpoint", saved))["path"]
    ended = await call(client, "end_training_run", {"run_id": run_id})
    assert ended["checkpoints_kept"] == [sampler] and ended["slots_free"] == 1
    # evaluate sampled the run's current weights: those temporary weights end with the run.
    assert [p.rsplit("/", 1)[1][:14] for p in ended["temporary_deleted"]] == ["temp-sampling-"]
    return sampler


async def warm_start(client) -> str:
    """SFT on both answers, in the slot the facts run freed; its state checkpoint."""
    warm = [{"prompt": q, "completion": f" {a}"} for q in QUESTIONS for a in ("yes", "no")]
    run_id = (await call(client, "create_training_run", {"rank": 16, "seed": 0}))["run_id"]
    await call(
        client,
        "train_sft",
        {"run_id": run_id, "examples": warm, "steps": WARM_STEPS, "learning_rate": 4e-3},
    )
    return (await call(client, "save_checkpoint", {"run_id": run_id, "name": "warm"}))["path"]


async def check_sampler_checkpoint(client, sampler: str) -> None:
    prompts = [f"{q}:" for q, _ in FACTS]
    sampled = await call(
        client,
        "sample",
        {"model": sampler, "prompts": prompts, "max_tokens": 4, "temperature": 0.0},
    )
    assert sampled["model_kind"] == "checkpoint"
    texts = [s["text"] for s in sampled["samples"]]
    assert all(t.strip().startswith(a) for t, (_, a) in zip(texts, FACTS, strict=True)), texts


async def learn_from_rewards(client, warm: str) -> list[float]:
    fresh = {"checkpoint": warm, "with_optimizer": False}
    policy = await call(client, "resume_training_run", fresh)
    assert (policy["resumed_at_step"], policy["step"]) == (WARM_STEPS, WARM_STEPS)
    means, step = [], WARM_STEPS
    for iteration in range(RL_ITERATIONS):
        sampled = await call(
            client,
            "sample",
            {
                "model": policy["run_id"],
                "prompts": QUESTIONS,
                "num_samples": GROUP,
                "max_tokens": 4,
                "temperature": 1.0,
                "seed": 100 * iteration,
            },
        )
        rewards = {s["rollout_id"]: reward(s["text"]) for s in sampled["samples"]}
        update = await call(
            client,
            "train_on_rewards",
            {
                "run_id": policy["run_id"],
                "rewards": rewards,
                "adam": {"learning_rate": 2e-3},
            },
        )
        assert update["rewards"]["count"] == len(QUESTIONS) * GROUP
        assert update["staleness_max"] == 0
        step += update["updated"]  # False when every group agreed: nothing to learn from
        assert update["step"] == step  # the resumed run's count continues
        means.append(update["rewards"]["mean"])
    return means


async def test_an_agent_teaches_facts_restarts_and_learns_from_its_own_rewards(tmp_path) -> None:
    (tmp_path / "trio-mcp.toml").write_text(SETTINGS)
    configured = Config(**tomllib.loads(SETTINGS)).model_dump(mode="json")
    expected = {k: v for k, v in configured.items() if k not in NOT_LIMITS}
    server = ("--backend", "local", "--audit-log", str(tmp_path / "audit.jsonl"))
    with http_server(*server, cwd=tmp_path) as (url, first_log):
        async with authorised_client(url) as client:
            assert (await limits(client))["limits"] == expected
            sampler = await teach_facts(client)
            warm = await warm_start(client)
    # A new server process on the same data: nothing of the first one is in memory.
    with http_server(*server, cwd=tmp_path) as (url, second_log):
        async with authorised_client(url) as client:
            read = await limits(client)
            assert read["limits"] == expected
            assert read["budget"]["steps_used"] == SFT_STEPS + WARM_STEPS
            await check_sampler_checkpoint(client, sampler)
            means = await learn_from_rewards(client, warm)
    print("mean rewards", means)
    assert means[-1] > means[0] and means[-1] >= 0.75, means
    for log in (first_log, second_log):
        assert "Traceback" not in log.read_text()
