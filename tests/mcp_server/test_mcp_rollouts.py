"""Plain function tests of the RL pieces behind sample and train_on_rewards: the rollout store
(bounded in count and time, each rollout claimed once, refusals naming every bad id), grouping
and advantages, the policy-loss datum layout, and train_sft's learning-rate schedules."""

from __future__ import annotations

import itertools
import math
import threading

import pytest

from mcp_server.advantages import (
    EQUAL,
    SINGLE,
    Scored,
    group_advantages,
    group_by_prompt,
    plan_update,
    policy_datum,
)
from mcp_server.datums import check_datum
from mcp_server.errors import InvalidInput
from mcp_server.rollouts import RolloutStore
from mcp_server.schedules import learning_rates


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def store(max_rollouts: int = 10, ttl_s: float = 60.0) -> tuple[RolloutStore, Clock]:
    clock = Clock()
    return RolloutStore(max_rollouts, ttl_s, clock=clock), clock


def add(rollouts: RolloutStore, run_id: str | None = "run-a", prompt=(1, 2), version=0) -> str:
    return rollouts.add(
        source=run_id or "Qwen/Qwen3-4B-Instruct-2507",
        run_id=run_id,
        prompt_tokens=prompt,
        completion_tokens=[7, 8],
        logprobs=[-0.5, -1.5],
        weights_version=version,
    )


def test_a_claimed_rollout_keeps_what_the_sampler_produced_and_cannot_be_claimed_again():
    rollouts, _ = store()
    first = add(rollouts, version=3)
    [claimed] = rollouts.claim([first], "run-a")
    assert claimed.prompt_tokens == (1, 2) and claimed.completion_tokens == (7, 8)
    assert claimed.logprobs == (-0.5, -1.5) and claimed.weights_version == 3
    with pytest.raises(InvalidInput, match=f"{first}: already used by an update"):
        rollouts.claim([first], "run-a")


def test_a_refusal_names_every_bad_id_with_its_reason_and_takes_none():
    rollouts, clock = store(max_rollouts=2, ttl_s=10)
    old = add(rollouts)
    clock.now = 11  # `old` expires
    evicted, other, good, newest = (
        add(rollouts),
        add(rollouts, run_id="run-b"),
        add(rollouts),
        add(rollouts),
    )
    assert len(rollouts) == 2  # `evicted` and `other` were dropped for room
    used = good
    rollouts.claim([used], "run-a")
    base = add(rollouts, run_id=None)
    with pytest.raises(InvalidInput) as refused:
        rollouts.claim([old, evicted, used, "ro-0000000000000000", base, newest], "run-a")
    text = str(refused.value)
    assert f"{old}: expired" in text
    assert f"{evicted}" in text and "store is full (max_rollouts 2)" in text
    assert f"{used}: already used" in text
    assert "ro-0000000000000000: unknown" in text
    assert f"{base}: sampled from 'Qwen/Qwen3-4B-Instruct-2507', not from run 'run-a'" in text
    assert newest not in text
    assert rollouts.claim([newest], "run-a")[0].rollout_id == newest, "nothing was taken"
    assert other not in str(refused.value)


def test_another_runs_rollouts_are_refused_and_stay_usable_by_their_run():
    rollouts, _ = store()
    theirs = add(rollouts, run_id="run-b")
    with pytest.raises(InvalidInput, match="sampled from 'run-b', not from run 'run-a'"):
        rollouts.claim([theirs], "run-a")
    assert rollouts.claim([theirs], "run-b")[0].run_id == "run-b"


def test_released_rollouts_are_usable_again_and_still_expire_in_time():
    rollouts, clock = store(ttl_s=10)
    early = add(rollouts)
    clock.now = 5
    late = add(rollouts)
    claimed = rollouts.claim([early], "run-a")
    rollouts.release(claimed)
    clock.now = 11  # past `early`'s lifetime, within `late`'s
    with pytest.raises(InvalidInput, match=f"{early}: expired"):
        rollouts.claim([early], "run-a")
    assert rollouts.claim([late], "run-a")


def test_concurrent_claims_of_the_same_rollouts_give_them_to_exactly_one():
    rollouts, _ = store(max_rollouts=1000)
    ids = [add(rollouts) for _ in range(50)]
    won, refused = [], []
    start = threading.Barrier(8)

    def claim() -> None:
        start.wait()
        try:
            won.append(rollouts.claim(ids, "run-a"))
        except InvalidInput:
            refused.append(1)

    threads = [threading.Thread(target=claim) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(won) == 1 and len(refused) == 7


def scored(rewards: list[float], prompt=(1, 2)) -> list[Scored]:
    rollouts, _ = store(max_rollouts=100)
    ids = [add(rollouts, prompt=prompt) for _ in rewards]
    return [
        Scored(r, reward) for r, reward in zip(rollouts.claim(ids, "run-a"), rewards, strict=True)
    ]


def test_groups_are_rollouts_of_the_same_prompt_in_order_of_first_appearance():
    a, b = scored([1.0, 0.0], prompt=(1,)), scored([0.5], prompt=(2,))
    groups = group_by_prompt([a[0], b[0], a[1]])
    assert [[s.reward for s in g] for g in groups] == [[1.0, 0.0], [0.5]]


def test_advantages_are_centred_by_default_and_normalised_on_request():
    assert group_advantages([1.0, 0.0, 0.0, 1.0]) == [0.5, -0.5, -0.5, 0.5]
    assert group_advantages([3.0, 1.0], "normalised") == pytest.approx([1.0, -1.0])
    huge = group_advantages([1e6, -1e6, 1e6 - 1e-9], "normalised")
    assert all(math.isfinite(a) for a in huge)


def test_groups_without_variance_are_skipped_and_reported_or_trained_with_zero_advantage():
    items = scored([1.0, 0.0], prompt=(1,)) + scored([1.0, 1.0], prompt=(2,))
    items += scored([0.3], prompt=(3,))
    plan = plan_update(items)
    assert [round(a, 6) for _, a in plan.trained] == [0.5, -0.5]
    assert [(g.used, g.skipped_because) for g in plan.groups] == [
        (True, None),
        (False, EQUAL),
        (False, SINGLE),
    ]
    kept = plan_update(items, skip_zero_variance=False)
    assert [a for _, a in kept.trained] == [0.5, -0.5, 0.0, 0.0, 0.0]
    assert all(g.used for g in kept.groups)


def test_a_policy_datum_is_shifted_and_masks_the_prompt_with_zero_advantage():
    [item] = scored([1.0], prompt=(1, 2))
    datum = policy_datum(item.rollout, 0.25)
    # Sequence 1 2 | 7 8: reads 1 2 7, predicts 2 7 8.
    assert datum.model_input == [1, 2, 7]
    assert datum.target_tokens == [2, 7, 8]
    assert datum.logprobs == [0.0, -0.5, -1.5]
    assert datum.advantages == [0.0, 0.25, 0.25]
    assert check_datum(0, datum.model_input, datum.inputs, "importance_sampling") == 3
    with pytest.raises(ValueError, match="finite"):
        policy_datum(item.rollout, math.nan)


@pytest.mark.parametrize("schedule", ["constant", "linear", "cosine"])
def test_schedules_warm_up_then_decay_and_every_rate_is_positive(schedule):
    rates = learning_rates(1e-3, 10, schedule, warmup_steps=3)
    assert rates[:3] == pytest.approx([2.5e-4, 5e-4, 7.5e-4])
    assert rates[3] == pytest.approx(1e-3)
    assert all(0 < r <= 1e-3 for r in rates)
    if schedule == "constant":
        assert rates[3:] == pytest.approx([1e-3] * 7)
    else:
        assert all(a > b for a, b in itertools.pairwise(rates[3:]))
    if schedule == "linear":
        assert rates[-1] == pytest.approx(1e-3 / 7)


def test_a_schedule_refuses_a_warm_up_as_long_as_the_call():
    with pytest.raises(ValueError, match="warmup_steps"):
        learning_rates(1e-3, 4, "cosine", warmup_steps=4)
