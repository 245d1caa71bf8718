"""An agent's two training goals, end to end: the official `mcp` client drives the real `trio-mcp`
console script over streamable HTTP against trio-local, in as few calls as an agent needs.

1. Teach 8 facts and check them: create a run, one train_sft with held-out examples, one evaluate
   showing 8/8 exact match.
2. RL from its own rewards on a yes/no task, from a warm start (train_sft on both answers, then a
   fresh optimizer through save_checkpoint + resume_training_run): each iteration is one sample
   call (every prompt, a group each) and one train_on_rewards call; the mean reward rises over 5
   iterations.

The settings (learning rates, steps, seeds) are the ones that make the offline stand-in learn
reliably: they are fixed, so the run is the same every time.
"""

from __future__ import annotations

import re

import pytest
from mcp_helpers import authorised_client, http_server

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


async def call(client, tool: str, arguments: dict) -> dict:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, (tool, result.content)
    return result.structured_content


async def teach_facts(client) -> None:
    run_id = (await call(client, "create_training_run", {"rank": 16, "seed": 0}))["run_id"]
    trained = await call(
        client,
        "train_sft",
        {
            "run_id": run_id,
            "examples": pairs(FACTS),
            "held_out": pairs(HELD_OUT),
            "steps": 40,
            "learning_rate": 5e-3,
            "lr_schedule": "cosine",
            "warmup_steps": 3,
            "eval_every": 10,
            "stop_when_validation_rises": False,
        },
    )
    assert trained["steps"] == 40 and trained["losses"][-1] < trained["losses"][0] / 10
    assert [point["step"] for point in trained["validation"]] == [10, 20, 30, 40]
    checked = await call(
        client,
        "evaluate",
        {"model": run_id, "examples": pairs(FACTS), "generate": True, "max_tokens": 8},
    )
    answers = [e["answer"] for e in checked["examples"]]
    assert checked["exact_match_rate"] == 1.0, answers


async def learn_from_rewards(client) -> list[float]:
    warm = [{"prompt": q, "completion": f" {a}"} for q in QUESTIONS for a in ("yes", "no")]
    run_id = (await call(client, "create_training_run", {"rank": 16, "seed": 0}))["run_id"]
    await call(
        client,
        "train_sft",
        {"run_id": run_id, "examples": warm, "steps": 10, "learning_rate": 4e-3},
    )
    saved = await call(client, "save_checkpoint", {"run_id": run_id, "name": "warm-start"})
    policy = await call(
        client, "resume_training_run", {"checkpoint": saved["path"], "with_optimizer": False}
    )
    means = []
    for iteration in range(5):
        sampled = await call(
            client,
            "sample",
            {
                "model": policy["run_id"],
                "prompts": QUESTIONS,
                "num_samples": 8,
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
        assert update["rewards"]["count"] == 32 and update["staleness_max"] == 0
        means.append(update["rewards"]["mean"])
    return means


async def test_an_agent_teaches_facts_and_learns_from_its_own_rewards(tmp_path) -> None:
    audit = str(tmp_path / "audit.jsonl")
    with http_server("--backend", "local", "--audit-log", audit, cwd=tmp_path) as (url, log):
        async with authorised_client(url) as client:
            await teach_facts(client)
            means = await learn_from_rewards(client)
    assert means[-1] > means[0] and means[-1] >= 0.75, means
    assert "Traceback" not in log.read_text()
