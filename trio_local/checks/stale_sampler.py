"""On-policy rollouts sampled from a sampler saved several optimizer steps ago."""

from __future__ import annotations

from collections import defaultdict

from trio_local.checks.base import Check, Tally
from trio_local.checks.context import CheckContext
from trio_local.checks.observations import SampleCall

MIN_LAG = 2  # one step behind is a pipelined (off-by-one) RL loop, which is deliberate


class StaleSampler(Check):
    name = "stale-sampler"
    rule = "stale-sampler"
    title = "a policy-loss run samples rollouts from weights several optimizer steps old"
    fix = (
        "re-create the sampler after each update: "
        "sampler = training.save_weights_and_get_sampling_client()"
    )
    unit = "sample requests"

    def __init__(self) -> None:
        super().__init__()
        # checkpoint uri -> optimizer-step counts of its training run at stale samples
        self.lags: dict[str, list[tuple[int, int]]] = defaultdict(list)
        self.first: dict[str, str] = {}  # checkpoint uri -> sampling run of the first example

    def on_sample(self, call: SampleCall, ctx: CheckContext) -> None:
        uri = call.source_checkpoint_uri or ""
        saved = ctx.checkpoints.get(uri)
        if saved is None or call.is_scoring:  # the base model, or a fixed reference's logprobs
            return
        now = ctx.optim_steps.get(saved.run_id, 0)
        if now - saved.optim_steps >= MIN_LAG:
            self.lags[uri].append((saved.optim_steps, now))
            self.first.setdefault(uri, call.sampling_run)

    def summary(self, ctx: CheckContext) -> Tally:
        tally = Tally()
        for uri, lags in self.lags.items():
            saved = ctx.checkpoints[uri]
            # Repeated use at different steps, by a run that trains on its rollouts.
            if saved.run_id not in ctx.policy_runs or len({now for _, now in lags}) < 2:
                continue
            tally.add(
                saved.run_id,
                {
                    "run_id": saved.run_id,
                    "sampling_run": self.first[uri],
                    "checkpoint": uri,
                    "saved_at_optimizer_step": saved.optim_steps,
                    "sampled_at_optimizer_steps": sorted({now for _, now in lags}),
                },
                count=len(lags),
            )
        return tally
