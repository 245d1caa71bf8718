"""train_on_rewards: one policy-gradient update from the agent's rewards for sampled rollouts.

The agent samples groups of completions with `sample` (several prompts, num_samples each), scores
their text however it likes, and sends `{rollout_id: reward}`. The server does the rest: it takes
the rollouts out of the store (`mcp_server.rollouts`: unknown, expired, used and other runs'
rollouts are refused by name, and two calls can never both use one), groups them by prompt,
turns rewards into advantages (`mcp_server.advantages`), builds the policy-loss datums with the
sampler's logprobs, and runs one budgeted forward_backward + optim_step
(`train_step.apply_update`). No code of the agent runs in the server: the agent is the reward
function.
"""

from __future__ import annotations

import math
import re
import statistics
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints, field_validator

from mcp_server import guards
from mcp_server.advantages import AdvantageMode, Scored, plan_update, policy_datum
from mcp_server.app import AppState, BackendResult, ToolInput, backend_fields
from mcp_server.budget import BudgetLeft
from mcp_server.datums import to_sdk_datum
from mcp_server.errors import GuardRefusal, TrainingStopped
from mcp_server.rollouts import ROLLOUT_ID_PATTERN
from mcp_server.spec import ToolCall, ToolSpec
from mcp_server.tools._common import RUN_ID, backend
from mcp_server.tools.train_step import AdamConfig, Update, apply_update

# Rewards are scores, not logits: a bound keeps one wild value from swamping a normalised group
# or a centred one's gradient.
MAX_ABS_REWARD = 1e6
MAX_REWARDS = 4096

RolloutId = Annotated[str, StringConstraints(pattern=ROLLOUT_ID_PATTERN)]
Reward = Annotated[float, Field(ge=-MAX_ABS_REWARD, le=MAX_ABS_REWARD)]


class RLAdam(AdamConfig):
    learning_rate: float = Field(
        1e-4,
        gt=0,
        le=1,
        description="Adam learning rate. The offline stand-in moves at about 1e-3 to 5e-3; the "
        "real service's models at about 1e-6 to 1e-5.",
    )


class TrainOnRewardsInput(ToolInput):
    run_id: str = RUN_ID
    rewards: dict[RolloutId, Reward] = Field(
        min_length=1,
        max_length=MAX_REWARDS,
        description="rollout_id (from sample, sampled from this run) -> reward: a finite number "
        f"within +-{MAX_ABS_REWARD:g}. Completions of one prompt form a group; give every "
        "completion of a group its reward.",
    )
    advantages: AdvantageMode = Field(
        "centred",
        description="'centred': reward minus its group's mean (GRPO). 'normalised': also "
        "divided by the group's standard deviation.",
    )
    skip_zero_variance: bool = Field(
        True,
        description="Skip groups whose rewards are all equal (their advantages are 0: no "
        "signal, only cost); they are reported as skipped.",
    )
    loss_fn: Literal["importance_sampling", "ppo"] = Field(
        "importance_sampling",
        description="importance_sampling corrects for the sampler's logprobs; ppo also clips "
        "the ratio (loss_fn_config clip_low_threshold / clip_high_threshold, default 0.8 / 1.2).",
    )
    loss_fn_config: dict[str, float] | None = Field(
        None, max_length=16, description="For ppo: clip_low_threshold, clip_high_threshold."
    )
    adam: RLAdam = Field(default_factory=RLAdam, description="Optimizer settings.")

    @field_validator("rewards", mode="before")
    @classmethod
    def _rollout_ids(cls, value: Any) -> Any:
        # Checked before pydantic's own key check, whose error would quote the key sent.
        if isinstance(value, dict):
            for position, key in enumerate(value):
                if not isinstance(key, str) or not re.fullmatch(ROLLOUT_ID_PATTERN, key):
                    raise ValueError(
                        f"key {position} is not a rollout id: use the rollout_id values sample "
                        "returned ('ro-' and 16 hex digits)"
                    )
        return value


class GroupResult(BaseModel):
    prompt_tokens: int = Field(description="Length of the group's prompt in tokens.")
    size: int = Field(description="Rollouts of this prompt that got a reward.")
    reward_mean: float
    reward_std: float
    used: bool
    skipped_because: str | None = None


class RewardStats(BaseModel):
    mean: float
    std: float = Field(description="Spread (population standard deviation) of all rewards.")
    min: float
    max: float
    count: int


class TrainOnRewardsOutput(BackendResult):
    run_id: str
    updated: bool = Field(description="False when every group was skipped: no step was taken.")
    step: int = Field(description="Optimizer steps the run has taken.")
    rewards: RewardStats
    groups_used: int
    groups_skipped: int
    groups: list[GroupResult]
    rollouts_trained: int
    tokens: int = Field(description="Tokens sent (prompt and completion) in the update.")
    trained_tokens: int = Field(description="Completion tokens that carried an advantage.")
    staleness_max: int = Field(
        description="Updates the run took since the oldest of these rollouts was sampled (0: "
        "sampled from the current weights)."
    )
    staleness_mean: float
    loss: float | None = Field(description="The policy loss the SDK reported (loss_mean).")
    metrics: dict[str, float]
    elapsed_s: float
    tokens_per_s: float
    budget_left: BudgetLeft

    def summary(self) -> str:
        step = f"step {self.step}" if self.updated else "no update (every group skipped)"
        return (
            f"train_on_rewards: {step}; reward mean {self.rewards.mean:.4g} (std "
            f"{self.rewards.std:.4g}, {self.rewards.count} rollouts); groups used "
            f"{self.groups_used}, skipped {self.groups_skipped}; {self.trained_tokens} tokens "
            f"trained; staleness max {self.staleness_max}; budget left {self.budget_left.steps} "
            "steps (full result: structured content)"
        )


async def train_on_rewards(
    app: AppState, args: TrainOnRewardsInput, ctx: ToolCall
) -> TrainOnRewardsOutput:
    config = app.config
    guards.require_writable(config, "train_on_rewards")
    guards.check_examples(config, len(args.rewards))
    guards.check_learning_rate(config, args.adam.learning_rate)
    guards.check_loss_config(args.loss_fn, args.loss_fn_config)
    run = app.runs.get(args.run_id)
    # Taken out of the store now, atomically: a concurrent call naming them is refused.
    claimed = app.rollouts.claim(args.rewards, run.run_id)
    sent = False
    try:
        scored = [Scored(r, args.rewards[r.rollout_id]) for r in claimed]
        plan = plan_update(scored, args.advantages, args.skip_zero_variance)
        datums = [policy_datum(rollout, advantage) for rollout, advantage in plan.trained]
        for index, datum in enumerate(datums):
            guards.check_example_length(config, index, len(datum.model_input) + 1)
        tokens = sum(len(d.model_input) for d in datums)
        trained_tokens = sum(1 for d in datums for a in d.advantages if a != 0)
        guards.check_tokens_per_call(config, tokens)
        staleness = [run.step - r.weights_version for r in claimed]
        be = await backend(app)
        applied = None
        if datums:
            batch = [to_sdk_datum(d.model_input, d.inputs) for d in datums]
            update = Update(
                batch, args.loss_fn, args.loss_fn_config, args.adam, tokens, trained_tokens
            )
            sent = True  # from here the update may reach the backend: the rollouts stay used
            try:
                applied = await apply_update(app, run, update)
            except GuardRefusal:
                sent = False  # the budget refused it before anything was sent
                raise
    except BaseException:
        if not sent:
            app.rollouts.release(claimed)
        raise
    if applied is not None and not math.isfinite(applied.loss):
        raise TrainingStopped(
            f"train_on_rewards produced a non-finite loss ({applied.loss}); the step was applied "
            "and the weights may be damaged: lower the learning rate or resume from a checkpoint"
        )
    rewards = [item.reward for item in scored]
    elapsed = applied.elapsed_s if applied else 0.0
    return TrainOnRewardsOutput(
        run_id=run.run_id,
        updated=applied is not None,
        step=run.step,
        rewards=RewardStats(
            mean=statistics.fmean(rewards),
            std=statistics.pstdev(rewards),
            min=min(rewards),
            max=max(rewards),
            count=len(rewards),
        ),
        groups_used=sum(1 for g in plan.groups if g.used),
        groups_skipped=sum(1 for g in plan.groups if not g.used),
        groups=[
            GroupResult(
                prompt_tokens=g.prompt_tokens,
                size=g.size,
                reward_mean=g.reward_mean,
                reward_std=g.reward_std,
                used=g.used,
                skipped_because=g.skipped_because,
            )
            for g in plan.groups
        ],
        rollouts_trained=len(datums),
        tokens=tokens if applied else 0,
        trained_tokens=trained_tokens if applied else 0,
        staleness_max=max(staleness),
        staleness_mean=statistics.fmean(staleness),
        loss=applied.loss if applied else None,
        metrics=applied.metrics if applied else {},
        elapsed_s=elapsed,
        tokens_per_s=round(tokens / elapsed, 1) if applied and elapsed > 0 else 0.0,
        budget_left=app.budget.left(),
        **backend_fields(be),
    )


SPEC = ToolSpec(
    name="train_on_rewards",
    title="RL update from rewards",
    description=(
        "Reinforcement learning from your own rewards, one update per call. First call sample "
        "on this run with `prompts` and num_samples >= 2 (a group per prompt); score each "
        "completion's text yourself; then pass {rollout_id: reward}. The server groups the "
        "rollouts by prompt, computes advantages (reward minus the group mean), builds the "
        "policy-loss datums with the sampler's logprobs, and takes one optimizer step (one "
        "budget step). It reports the reward mean and spread, groups used and skipped (and "
        "why), tokens trained and staleness. Each rollout trains once; sample again after each "
        "update. Warm-start with train_sft first so rewards vary within groups."
    ),
    input_model=TrainOnRewardsInput,
    output_model=TrainOnRewardsOutput,
    handler=train_on_rewards,
    read_only=False,
    destructive=False,
    idempotent=False,
    open_world=False,
    run_field="run_id",
)
