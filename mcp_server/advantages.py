"""Rewards to advantages to policy-loss datums: GRPO-style, one group per prompt.

Completions of the same prompt form a group; each completion's advantage is its reward minus the
group's mean (`centred`, the default) or that difference over the group's standard deviation
(`normalised`). A group whose rewards are all equal (or that holds one completion) has advantage
0 everywhere: it changes nothing and only costs tokens, so by default it is skipped and reported.

A datum follows the SDK's policy-loss layout (pytrio 0.2.9 `importance_sampling` / `ppo`): the
sequence is prompt + completion, `model_input = tokens[:-1]`, and every `loss_fn_inputs` list has
one value per position, shifted like the targets. Prompt positions carry logprob 0 and advantage
0 (policy losses ignore `weights`, so the advantage is the mask).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from mcp_server.rollouts import Rollout

AdvantageMode = Literal["centred", "normalised"]
# Keeps a normalised advantage finite when a group's spread is tiny but not zero.
STD_FLOOR = 1e-6

SINGLE = "one rollout of this prompt: nothing to compare it with (sample num_samples >= 2)"
EQUAL = "every rollout of this prompt got the same reward: zero advantages, nothing to learn"


@dataclass(frozen=True)
class Scored:
    rollout: Rollout
    reward: float


@dataclass(frozen=True)
class GroupReport:
    """One prompt's group: how many rollouts, their rewards, and whether it trained."""

    prompt_tokens: int
    size: int
    reward_mean: float
    reward_std: float
    used: bool
    skipped_because: str | None = None


@dataclass(frozen=True)
class Plan:
    """What one update trains on: (rollout, advantage) pairs, and a report per group."""

    trained: list[tuple[Rollout, float]]
    groups: list[GroupReport]


def group_by_prompt(scored: Sequence[Scored]) -> list[list[Scored]]:
    """Group rollouts whose prompt tokens are identical, in order of first appearance."""
    groups: dict[tuple[int, ...], list[Scored]] = {}
    for item in scored:
        groups.setdefault(item.rollout.prompt_tokens, []).append(item)
    return list(groups.values())


def group_advantages(rewards: Sequence[float], mode: AdvantageMode = "centred") -> list[float]:
    mean = statistics.fmean(rewards)
    centred = [r - mean for r in rewards]
    if mode == "centred":
        return centred
    spread = statistics.pstdev(rewards)
    return [c / max(spread, STD_FLOOR) for c in centred]


def plan_update(
    scored: Sequence[Scored], mode: AdvantageMode = "centred", skip_zero_variance: bool = True
) -> Plan:
    trained: list[tuple[Rollout, float]] = []
    reports: list[GroupReport] = []
    for group in group_by_prompt(scored):
        rewards = [item.reward for item in group]
        size = len(group[0].rollout.prompt_tokens)
        mean, spread = statistics.fmean(rewards), statistics.pstdev(rewards)
        flat = len(group) == 1 or all(r == rewards[0] for r in rewards)
        if flat and skip_zero_variance:
            why = SINGLE if len(group) == 1 else EQUAL
            reports.append(
                GroupReport(size, len(group), mean, spread, used=False, skipped_because=why)
            )
            continue
        advantages = [0.0] * len(group) if flat else group_advantages(rewards, mode)
        trained.extend((item.rollout, a) for item, a in zip(group, advantages, strict=True))
        reports.append(GroupReport(size, len(group), mean, spread, used=True))
    return Plan(trained=trained, groups=reports)


@dataclass(frozen=True)
class PolicyDatum:
    """One policy-loss datum as plain lists (the tool turns it into an SDK `Datum`)."""

    model_input: list[int]
    target_tokens: list[int]
    logprobs: list[float]
    advantages: list[float]

    @property
    def inputs(self) -> dict[str, list[float]]:
        return {
            "target_tokens": [float(t) for t in self.target_tokens],
            "logprobs": self.logprobs,
            "advantages": self.advantages,
        }


def policy_datum(rollout: Rollout, advantage: float) -> PolicyDatum:
    """The datum of one rollout: the sampled tokens scored against the sampler's logprobs."""
    if not math.isfinite(advantage):
        raise ValueError("advantage must be finite")
    prompt, completion = list(rollout.prompt_tokens), list(rollout.completion_tokens)
    tokens = prompt + completion
    logprobs = [0.0] * len(prompt) + list(rollout.logprobs)
    advantages = [0.0] * len(prompt) + [advantage] * len(completion)
    return PolicyDatum(
        model_input=tokens[:-1],
        target_tokens=tokens[1:],
        logprobs=logprobs[1:],
        advantages=advantages[1:],
    )
