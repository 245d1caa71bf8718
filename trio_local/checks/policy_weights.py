"""A policy loss whose prompt is "masked" with weights: policy losses ignore `weights`.

pytrio 0.2.9 sends only target_tokens, logprobs and advantages for a policy loss and drops
`weights` on the client, so the service sees the mistake as advantages on the prompt: on the
leading positions that carry no sampler logprob (0.0, the placeholder every RL recipe puts on
prompt tokens, since the sampler only scores what it generated). Other clients may send
`weights` on the wire; that is reported too.
"""

from __future__ import annotations

from trio_local.checks.base import Check
from trio_local.checks.context import CheckContext, DatumView, excerpt
from trio_local.checks.observations import FORWARD_BACKWARD, POLICY_LOSSES, TrainerEvent

MIN_PROMPT = 2  # a single 0.0 logprob can be a sampled token the model was sure of


class PolicyWeights(Check):
    name = "policy-loss-prompt"
    rule = "policy-loss-weights"
    title = "policy loss trains the prompt (weights are ignored; advantages must be 0 there)"
    fix = (
        "mask the prompt with advantages: [0.0] * len(prompt) + [advantage] * len(completion); "
        "policy losses never read weights"
    )

    def on_event(self, event: TrainerEvent, ctx: CheckContext) -> None:
        if event.type != FORWARD_BACKWARD or event.loss not in POLICY_LOSSES:
            return
        for index, datum in enumerate(event.payload.data):
            view = DatumView(datum, event.payload.auto_shift)
            if not view.aligned:
                continue
            example = {"run_id": event.run_id, "step": event.step, "datum": index}
            if view.weights is not None:
                problem = f"weights sent with {event.loss}"
                self.tally.add(event.run_id, {**example, "problem": problem})
                continue
            if view.advantages is None:
                continue
            prompt = _prompt_positions(view)
            hits = [i for i in prompt if view.advantages[i] != 0 and view.targets[i] != -100]
            if hits:
                self.tally.add(
                    event.run_id,
                    {
                        **example,
                        "problem": f"{len(hits)} prompt positions carry a non-zero advantage",
                        "advantages": excerpt(list(view.advantages), hits[0]),
                    },
                )


def _prompt_positions(view: DatumView) -> list[int]:
    """The leading positions without a sampler logprob. Chat labels are not used: a sampled
    completion may itself contain turn tokens, which would read as a prompt."""
    logprobs = view.logprobs or []
    lead = 0
    while lead < len(logprobs) and logprobs[lead] == 0.0:
        lead += 1
    if lead < MIN_PROMPT or lead == len(logprobs):  # no prompt, or nothing was sampled
        return []
    return list(range(lead))
