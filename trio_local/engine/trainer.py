"""Training runs: one LoRA adapter and one AdamW optimizer per run, driven by trainer events.

Each handler takes the run and the event's payload (already validated with the SDK's own
pydantic payload models) and returns the event's `result`, shaped as 0.2.9's client requires.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pytrio.protocol.actor.events.trainer.forward import TrainerForwardBackwardPayload
from pytrio.protocol.actor.events.trainer.optimize_step import TrainerOptimizeStepPayload

from trio_local.catalogue import TRAINER_LIMITS, RunnerLimits
from trio_local.engine.images import Flattened, estimate_mismatch, flatten, inputs_embeds
from trio_local.engine.losses import LOSSES, LossInputs, active_positions
from trio_local.engine.model import LoraSpec, ModelHost
from trio_local.engine.optimizer import AdamW
from trio_local.errors import EngineError
from trio_local.protocol.bounds import VALUE_REFUSED

IGNORE_INDEX = -100
# One datum of a batch: tokens, targets, loss weights, sampler logprobs, advantages.
BatchRow = tuple[list[int], list[int], list[float], list[float], list[float]]


@dataclass
class TrainerRun:
    run_id: str
    model_id: str
    lora: LoraSpec
    host: ModelHost
    image_pad_id: int = 0
    limits: RunnerLimits = TRAINER_LIMITS
    optimizer: Any = None
    optim_steps: int = 0
    usage: dict[str, int] = field(default_factory=dict)

    @property
    def adapter(self) -> str:
        return self.run_id

    def params(self) -> dict[str, Any]:
        return self.host.parameters(self.adapter)


def wire_tensor(values: np.ndarray) -> dict[str, object]:
    array = np.ascontiguousarray(values, dtype="<f4")
    return {
        "dtype": "<f4",
        "shape": list(array.shape),
        "encoding": "raw_le",
        "data": array.tobytes(),
    }


def _datum_positions(index: int, datum: Any, run: TrainerRun) -> Flattened:
    flat = flatten(
        datum.model_input.chunks,
        f"data[{index}].model_input",
        vocab_size=run.host.spec.vocab_size,
        image_pad_id=run.image_pad_id,
        model_id=run.model_id,
    )
    if len(datum.target_ids) != len(flat.ids) and any(s.wrong_estimate for s in flat.images):
        where = f"data[{index}].model_input"
        raise estimate_mismatch(flat, where, run.model_id, len(datum.target_ids))
    if len(datum.target_ids) != len(flat.ids):
        raise EngineError(
            "invalid_datum",
            f"data[{index}].target_ids has {len(datum.target_ids)} entries but model_input has "
            f"{len(flat.ids)} positions; they must be equal",
        )
    return flat


def _shift(values: list[Any], fill: Any) -> list[Any]:
    # auto_shift: position t is scored against label t+1, the first label is dropped.
    return [*values[1:], fill]


def _check_limits(rows: list[BatchRow], limits: RunnerLimits) -> None:
    # The SDK splits batches by the limits the service advertises; a client that does not
    # gets the same numbers back instead of an out-of-memory service.
    tokens = sum(len(row[0]) for row in rows)
    if len(rows) > limits.max_batch_size or tokens > limits.max_tokens_per_request:
        raise EngineError(
            VALUE_REFUSED,
            f"one event carries {len(rows)} samples and {tokens} tokens; trio-local's trainer "
            f"takes at most {limits.max_batch_size} samples and {limits.max_tokens_per_request} "
            "tokens per event (the SDK splits larger batches by these limits)",
        )


def _shared_positions(
    rows: list[BatchRow], images: list[Any], width: int, flat: list[int], targets: Any
) -> tuple[Any, Any]:
    """For flat positions (datum * width + position) scored without gradient: the first
    position of each distinct (prefix, target) and, for every position, the index of its first.

    A causal model's hidden state at a position depends only on the tokens up to it, so datums
    that share a prompt (a sampled group, the answers of one question) share its log-probs:
    each is computed once. A prefix is named exactly (a trie of token ids, no hash that could
    collide); a datum with an image has a prefix of its own, its embeddings being the image's."""
    import torch

    nodes: dict[tuple[object, int], int] = {}
    prefixes: list[list[int]] = []
    for index, (tokens, *_) in enumerate(rows):
        node: object = ("image", index) if images[index] else "text"
        chain = []
        for token in tokens:
            node = nodes.setdefault((node, token), len(nodes))
            chain.append(node)
        prefixes.append(chain)
    target_ids = targets.tolist()
    first: dict[tuple[int, int], int] = {}
    firsts: list[int] = []
    copies: list[int] = []
    for position in flat:
        datum, offset = divmod(position, width)
        key = (prefixes[datum][offset], target_ids[position])
        slot = first.setdefault(key, len(firsts))
        if slot == len(firsts):
            firsts.append(position)
        copies.append(slot)
    return torch.tensor(firsts, dtype=torch.long), torch.tensor(copies, dtype=torch.long)


def forward(run: TrainerRun, payload: TrainerForwardBackwardPayload, *, backward: bool) -> dict:
    import torch

    loss_name = payload.loss.type.strip().lower()
    loss = LOSSES.get(loss_name)
    if loss is None:
        raise EngineError(
            "unsupported_loss",
            f"loss '{payload.loss.type}' is not implemented by trio-local yet; "
            f"supported: {', '.join(sorted(LOSSES))}",
        )
    vocab = run.host.spec.vocab_size
    rows: list[BatchRow] = []
    images = []
    for index, datum in enumerate(payload.data):
        flat = _datum_positions(index, datum, run)
        tokens = flat.ids
        images.append(flat.images)
        length = len(tokens)
        targets = list(datum.target_ids)
        weights = list(datum.weights) if datum.weights is not None else [1.0] * length
        sampler = list(datum.logprobs) if datum.logprobs is not None else [0.0] * length
        advantages = list(datum.advantages) if datum.advantages is not None else [0.0] * length
        extras = (("weights", weights), ("logprobs", sampler), ("advantages", advantages))
        for name, values in extras:
            if len(values) != length:
                raise EngineError(
                    "invalid_datum",
                    f"data[{index}].{name} has {len(values)} entries, expected {length}",
                )
        for position, target in enumerate(targets):
            if target != IGNORE_INDEX and not 0 <= target < vocab:
                raise EngineError(
                    "token_id_out_of_range",
                    f"data[{index}].target_ids[{position}] is {target}, outside [0, {vocab}) "
                    "and not -100",
                )
        if payload.auto_shift:
            targets = _shift(targets, IGNORE_INDEX)
            weights, sampler, advantages = (
                _shift(weights, 0.0),
                _shift(sampler, 0.0),
                _shift(advantages, 0.0),
            )
        rows.append((tokens, targets, weights, sampler, advantages))

    _check_limits(rows, run.limits)
    batch, width = len(rows), max(len(row[0]) for row in rows)
    input_ids = torch.zeros((batch, width), dtype=torch.long)
    attention = torch.zeros((batch, width), dtype=torch.long)
    targets_t = torch.full((batch, width), IGNORE_INDEX, dtype=torch.long)
    weights_t = torch.zeros((batch, width))
    sampler_t = torch.zeros((batch, width))
    advantages_t = torch.zeros((batch, width))
    for i, (tokens, targets, weights, sampler, advantages) in enumerate(rows):
        n = len(tokens)
        input_ids[i, :n] = torch.tensor(tokens)
        attention[i, :n] = 1
        targets_t[i, :n] = torch.tensor(targets)
        weights_t[i, :n] = torch.tensor(weights)
        sampler_t[i, :n] = torch.tensor(sampler)
        advantages_t[i, :n] = torch.tensor(advantages)
    valid = targets_t != IGNORE_INDEX
    # Positions the loss leaves out (a zero weight or advantage) have no gradient: they are
    # scored without autograd, which spares their share of the unembedding's backward pass (a
    # masked prompt is most of a typical datum). With no position in the loss, every valid one
    # keeps autograd as before, so the adapter still gets its (zero) gradients.
    active = active_positions(valid, weights_t if loss.gate == "weights" else advantages_t)
    if not backward or not bool(active.any()):
        active = valid

    run.host.activate(run.adapter)
    totals = payload.gradient_accumulation
    # Unpadded batches let attention take its causal fast path (no [T, T] mask in memory).
    mask = None if bool(attention.all()) else attention
    with torch.set_grad_enabled(backward):
        embeds = inputs_embeds(run.host, input_ids, images)
        hidden = run.host.hidden_states(input_ids, mask, embeds)
        # Only positions with a target are scored: prompts masked with -100 and padding cost
        # no unembedding at all.
        positions, flat_targets = hidden.reshape(-1, hidden.shape[-1]), targets_t.reshape(-1)
        flat_active = active.reshape(-1)
        flat_inert = valid.reshape(-1) & ~flat_active
        scored = run.host.token_logprobs(
            positions[flat_active], flat_targets[flat_active], grad=backward
        )
        target_logprobs = torch.zeros(batch * width, dtype=scored.dtype)
        if bool(flat_inert.any()):
            inert = flat_inert.nonzero().squeeze(1)
            firsts, copies = _shared_positions(rows, images, width, inert.tolist(), flat_targets)
            with torch.no_grad():
                unique = run.host.token_logprobs(
                    positions[firsts].detach(), flat_targets[firsts], grad=False
                )
            target_logprobs[inert] = unique[copies]
        target_logprobs = target_logprobs.masked_scatter(flat_active, scored).view(batch, width)
        terms = loss.fn(
            LossInputs(
                target_logprobs=target_logprobs,
                valid=valid,
                weights=weights_t,
                sampler_logprobs=sampler_t if payload.data[0].logprobs is not None else None,
                advantages=advantages_t if payload.data[0].advantages is not None else None,
                config=dict(payload.loss.config),
                total_samples=totals.total_samples,
                total_active_tokens=totals.total_active_tokens,
                total_advantage_tokens=totals.total_advantage_tokens,
                loss_name=loss_name,
            )
        )
        if backward:
            terms.objective.backward()

    logprobs_np = target_logprobs.detach().numpy()
    loss_np = terms.elementwise.detach().numpy()
    outputs = []
    for i, row in enumerate(rows):
        n = len(row[0])
        lp, el = logprobs_np[i, :n], loss_np[i, :n]
        if payload.auto_shift:
            lp = np.concatenate([[0.0], lp[:-1]])
            el = np.concatenate([[0.0], el[:-1]])
        outputs.append({"logprobs": wire_tensor(lp), "elementwise_loss": wire_tensor(el)})
    loss_sum = float(loss_np.sum())
    count = terms.token_count
    run.usage = {
        "input_tokens": int(attention.sum().item()),
        "output_tokens": 0,
        "train_tokens": count if backward else 0,
    }
    return {
        "loss_fn_outputs": outputs,
        "metrics": {
            "loss_sum": loss_sum,
            "loss_mean": loss_sum / count if count else 0.0,
            "token_count": count,
        },
    }


def optimize_step(run: TrainerRun, payload: TrainerOptimizeStepPayload) -> dict:
    import torch

    adam = payload.adam_params
    params = list(run.params().values())
    if run.optimizer is None:
        run.optimizer = AdamW(params, lr=adam.learning_rate)
    for group in run.optimizer.param_groups:
        group.update(
            lr=adam.learning_rate,
            betas=(adam.beta1, adam.beta2),
            eps=adam.eps,
            weight_decay=adam.weight_decay,
        )
    grads = [param for param in params if param.grad is not None]
    max_norm = adam.grad_clip_norm if adam.grad_clip_norm > 0 else float("inf")
    grad_norm = float(torch.nn.utils.clip_grad_norm_(grads, max_norm)) if grads else 0.0
    run.optimizer.step()
    run.optimizer.zero_grad(set_to_none=True)
    run.optim_steps += 1
    run.usage = {"input_tokens": 0, "output_tokens": 0, "train_tokens": 0}
    return {
        "metrics": {
            "grad_norm": grad_norm,
            "learning_rate": adam.learning_rate,
            "step": float(run.optim_steps),
        }
    }


def optimizer_tensors(run: TrainerRun) -> tuple[dict[str, Any], dict[str, Any]]:
    """The optimizer's state as flat tensors plus JSON-able hyperparameters."""
    if run.optimizer is None:
        return {}, {"param_groups": []}
    state = run.optimizer.state_dict()
    tensors = {
        f"{index}.{key}": value.detach().clone().contiguous()
        for index, slots in state["state"].items()
        for key, value in slots.items()
    }
    groups = [
        {key: value for key, value in group.items() if key != "params"}
        for group in state["param_groups"]
    ]
    return tensors, {"param_groups": groups}


def restore_optimizer(run: TrainerRun, tensors: dict[str, Any], meta: dict[str, Any]) -> None:
    params = list(run.params().values())
    run.optimizer = AdamW(params, lr=1e-4)
    if not meta.get("param_groups"):
        return
    slots: dict[int, dict[str, Any]] = {}
    for key, value in tensors.items():
        index, name = key.split(".", 1)
        slots.setdefault(int(index), {})[name] = value
    group = dict(meta["param_groups"][0])
    group["betas"] = tuple(group["betas"])
    group["params"] = list(range(len(params)))
    run.optimizer.load_state_dict({"state": slots, "param_groups": [group]})
