"""sample → train_on_rewards, evaluate and train_sft's validation against a real backend
(trio-local through the real SDK, one in-process server for the module), with hostile input:
non-finite and huge rewards, reused, expired, unknown and other runs' rollout ids, two reward
calls racing for the same rollouts, a cancel mid-update. Each must end with a clear error, the
budget exact (steps spent = updates the backend took) and nothing half-written (a refused call
leaves its rollouts usable; an update that ran uses them up)."""

from __future__ import annotations

import anyio
import httpx
import pytest
from mcp import Client

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

PROMPTS = ["Can you help?", "Do you agree?"]
EXAMPLES = [
    {"prompt": "France capital:", "completion": " Paris."},
    {"prompt": "Sky colour:", "completion": " Blue."},
]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


def text(result) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


async def lane(app, run_id: str) -> dict:
    """The backend's counters for the run: `active_cycles` begun, `updates` optimizer steps."""
    base = app.backend.started.local.base_url
    async with httpx.AsyncClient(timeout=30) as http:
        stats = (await http.get(f"{base}/trio-local/stats")).json()
    return stats["runs"].get(run_id, {"updates": 0, "active_cycles": 0})


async def updates(app, run_id: str) -> int:
    return (await lane(app, run_id))["updates"]


async def new_run(client: Client, seed: int) -> str:
    created = await client.call_tool("create_training_run", {"rank": 4, "seed": seed})
    assert not created.is_error, text(created)
    return created.structured_content["run_id"]


async def rollouts(client: Client, run_id: str, seed: int) -> list[dict]:
    sampled = await client.call_tool(
        "sample",
        {
            "model": run_id,
            "prompts": PROMPTS,
            "num_samples": 2,
            "max_tokens": 2,
            "seed": seed,
        },
    )
    assert not sampled.is_error, text(sampled)
    samples = sampled.structured_content["samples"]
    assert [s["prompt_index"] for s in samples] == [0, 0, 1, 1]
    assert all(s["rollout_id"] for s in samples)
    return samples


def alternating(samples: list[dict]) -> dict[str, float]:
    """Rewards that differ within each group, so every group trains."""
    return {s["rollout_id"]: float(i % 2) for i, s in enumerate(samples)}


async def test_rewards_train_once_and_every_bad_reward_call_is_refused_whole(local):
    server, app = local
    async with Client(server) as client:
        run_a, run_b = await new_run(client, 0), await new_run(client, 1)
        samples = await rollouts(client, run_a, seed=1)
        rewards = alternating(samples)
        first = next(iter(rewards))
        steps_before = app.budget.steps_used

        for bad, why in [(float("nan"), "number"), (float("inf"), "number"), (1e300, "1000000")]:
            refused = await client.call_tool(
                "train_on_rewards", {"run_id": run_a, "rewards": {**rewards, first: bad}}
            )
            assert refused.is_error and "rewards" in text(refused) and why in text(refused)
        elsewhere = await client.call_tool(
            "train_on_rewards", {"run_id": run_b, "rewards": rewards}
        )
        assert elsewhere.is_error
        assert f"sampled from {run_a!r}, not from run {run_b!r}" in text(elsewhere)
        assert all(rollout_id in text(elsewhere) for rollout_id in rewards)
        assert app.budget.steps_used == steps_before, "refusals spend nothing"

        # Two calls race for the same rollouts: exactly one update happens.
        results: list = []

        async def reward() -> None:
            arguments = {"run_id": run_a, "rewards": rewards, "adam": {"learning_rate": 1e-3}}
            results.append(await client.call_tool("train_on_rewards", arguments))

        async with anyio.create_task_group() as group:
            group.start_soon(reward)
            group.start_soon(reward)
        done = [r for r in results if not r.is_error]
        refused = [r for r in results if r.is_error]
        assert len(done) == 1 and len(refused) == 1, [text(r) for r in results]
        assert "already used by an update" in text(refused[0])
        report = done[0].structured_content
        assert text(done[0]).startswith("train_on_rewards: step 1; reward mean 0.5 (std 0.5")
        assert report["updated"] and report["step"] == 1
        assert report["groups_used"] == 2 and report["groups_skipped"] == 0
        assert report["rewards"]["mean"] == 0.5 and report["rewards"]["count"] == 4
        assert report["staleness_max"] == 0 and report["trained_tokens"] > 0
        assert app.budget.steps_used == steps_before + 1
        assert await updates(app, run_a) == 1

        # The next rollouts come from the new weights; old ones are refused by name.
        fresh = await rollouts(client, run_a, seed=2)
        again = await client.call_tool(
            "train_on_rewards",
            {
                "run_id": run_a,
                "rewards": {first: 1.0, "ro-0000000000000000": 0.0, **alternating(fresh)},
            },
        )
        assert again.is_error
        assert f"{first}: already used" in text(again)
        assert "ro-0000000000000000: unknown" in text(again)
        # Equal rewards in every group: nothing to learn, no step taken, the reasons given.
        flat = await client.call_tool(
            "train_on_rewards",
            {"run_id": run_a, "rewards": {s["rollout_id"]: 1.0 for s in fresh}},
        )
        assert not flat.is_error, text(flat)
        assert not flat.structured_content["updated"]
        assert flat.structured_content["groups_skipped"] == 2
        assert "same reward" in flat.structured_content["groups"][0]["skipped_because"]
        assert app.budget.steps_used == steps_before + 1

        expiring = await rollouts(client, run_a, seed=3)
        ttl, app.rollouts.ttl_s = app.rollouts.ttl_s, 0.0
        try:
            expired = await client.call_tool(
                "train_on_rewards", {"run_id": run_a, "rewards": alternating(expiring)}
            )
        finally:
            app.rollouts.ttl_s = ttl
        assert expired.is_error and "expired" in text(expired)
        assert app.budget.steps_used == steps_before + 1 and await updates(app, run_a) == 1


async def test_a_cancel_mid_update_charges_the_step_and_uses_the_rollouts(local):
    server, app = local
    async with Client(server) as client:
        run_id = await new_run(client, 2)
        samples = await rollouts(client, run_id, seed=5)
        used_before = app.budget.steps_used
        cycles_before = (await lane(app, run_id))["active_cycles"]

        async with anyio.create_task_group() as group:

            async def update() -> None:
                arguments = {"run_id": run_id, "rewards": alternating(samples)}
                result = await client.call_tool("train_on_rewards", arguments)
                raise AssertionError(f"the update ended before the cancel: {text(result)}")

            group.start_soon(update)
            # Cancelled once the backend's cycle with the update began: mid-update.
            while (await lane(app, run_id)).get("active_cycles", 0) == cycles_before:
                await anyio.sleep(0.005)
            group.cancel_scope.cancel()

        await anyio.sleep(0.5)
        taken = await updates(app, run_id)
        state = await client.call_tool("get_training_run", {"run_id": run_id})
        assert taken == 1, "the cancelled update ran on the backend"
        assert state.structured_content["step"] == taken
        assert app.budget.steps_used - used_before == 1 and app.budget.steps_held == 0
        reused = await client.call_tool(
            "train_on_rewards", {"run_id": run_id, "rewards": alternating(samples)}
        )
        assert reused.is_error and "already used" in text(reused)


async def test_validation_schedules_evaluation_and_checkpoints_of_other_sessions(local):
    server, app = local
    async with Client(server) as client:
        run_id = await new_run(client, 3)
        steps_before = app.budget.steps_used
        trained = await client.call_tool(
            "train_sft",
            {
                "run_id": run_id,
                "examples": EXAMPLES,
                "held_out": EXAMPLES[:1],
                "steps": 4,
                "eval_every": 2,
                "learning_rate": 5e-3,
                "lr_schedule": "linear",
                "warmup_steps": 1,
                "stop_when_validation_rises": False,
            },
        )
        assert not trained.is_error, text(trained)
        result = trained.structured_content
        assert [p["step"] for p in result["validation"]] == [2, 4]
        assert result["validation"][1]["loss"] < result["validation"][0]["loss"]
        assert result["learning_rates"] == pytest.approx([2.5e-3, 5e-3, 5e-3 * 2 / 3, 5e-3 / 3])
        assert app.budget.steps_used - steps_before == 4, "validation spends no budget step"

        evaluated = await client.call_tool(
            "evaluate", {"model": run_id, "examples": EXAMPLES, "generate": True, "max_tokens": 4}
        )
        assert not evaluated.is_error, text(evaluated)
        report = evaluated.structured_content
        # The held-out example is EXAMPLES[0]: evaluate measures the same loss train_sft did.
        assert report["examples"][0]["loss"] == pytest.approx(
            result["validation"][-1]["loss"], rel=0.05
        )
        assert report["answer_tokens"] == sum(e["answer_tokens"] for e in report["examples"])
        assert 0 <= report["exact_match_rate"] <= report["contains_rate"] <= 1
        assert app.budget.steps_used - steps_before == 4, "evaluate spends no budget step"

        # Sampler weights of the run: one set at a time, kept out of the user's listing.
        for _ in range(2):
            await client.call_tool("sample", {"model": run_id, "prompt": "Hi", "max_tokens": 1})
            await client.call_tool(
                "train_sft", {"run_id": run_id, "examples": EXAMPLES, "steps": 1}
            )
        await client.call_tool("sample", {"model": run_id, "prompt": "Hi", "max_tokens": 1})
        listed = await client.call_tool(
            "list_checkpoints", {"run_id": run_id, "include_temporary": True}
        )
        temporary = [c for c in listed.structured_content["checkpoints"] if c["temporary"]]
        assert len(temporary) == 1, listed.structured_content

    # Checkpoints this session never saw, as an earlier server process left them.
    service = app.backend.started.service

    def outside(rank: int, name: str) -> str:
        training = service.create_lora_training_client(
            base_model="Qwen/Qwen3-4B-Instruct-2507", rank=rank, seed=0
        )
        return training.save_weights_for_sampler(name).result().path

    fits = await anyio.to_thread.run_sync(outside, 4, "outside")
    too_big = await anyio.to_thread.run_sync(outside, 16, "outside-big")
    async with Client(server) as client:
        # A text and a chat in one call; a checkpoint's rollouts train no run.
        chat = [{"role": "user", "content": "Hi"}]
        sampled = await client.call_tool(
            "sample", {"model": fits, "prompts": ["Hi", chat], "max_tokens": 2, "num_samples": 2}
        )
        assert not sampled.is_error, text(sampled)
        assert sampled.structured_content["model_kind"] == "checkpoint"
        samples = sampled.structured_content["samples"]
        assert [s["prompt_index"] for s in samples] == [0, 0, 1, 1]
        refused = await client.call_tool(
            "train_on_rewards", {"run_id": run_id, "rewards": alternating(samples)}
        )
        assert refused.is_error and f"sampled from {fits!r}" in text(refused)
        scored = await client.call_tool("evaluate", {"model": fits, "examples": EXAMPLES})
        assert not scored.is_error, text(scored)
        for tool, arguments in [
            ("sample", {"model": too_big, "prompt": "Hi"}),
            ("evaluate", {"model": too_big, "examples": EXAMPLES}),
        ]:
            refused = await client.call_tool(tool, arguments)
            assert refused.is_error and "max_rank" in text(refused), text(refused)
