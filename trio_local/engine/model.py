"""The tiny Qwen3 stand-in and its LoRA adapters.

One base model per model id lives in memory (its weights seeded from the id), wrapped once in
peft's layout (`qwen3.Adapted`); every training run and every sampler checkpoint on that id is
a named LoRA adapter on it, so a run costs only its adapter and optimizer state. A frozen zero
adapter named `_base` makes the bare base model selectable.

Logits are never materialised for a whole sequence: 8,192 positions x 151,936 vocabulary rows
is 5 GB in float32. `token_logprobs` runs the transformer once, then the unembedding and the
log-softmax a slice of positions at a time (recomputed in the backward pass).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trio_local.catalogue import LORA_ALPHA, StandInSpec
from trio_local.engine import weights_cache
from trio_local.engine.libraries import import_model_libraries
from trio_local.errors import EngineError

ATTN_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj")
MLP_MODULES = ("gate_proj", "up_proj", "down_proj")
UNEMBED_MODULES = ("lm_head",)
BASE_ADAPTER = "_base"
# Logits held at once when scoring a sequence: 32M floats (128 MB), ~210 positions of Qwen3's
# vocabulary; the unembedding's matmul is as fast in such slices as in one piece.
SLICE_ELEMENTS = 32 * 1024 * 1024
# Logits a training pass may keep for its backward (256M floats, 1 GiB): slices up to this many
# are kept as autograd saves them; the slices past it are recomputed in the backward pass
# instead (one more unembedding matmul each), so a long batch's memory stays bounded while an
# ordinary one (8 x 128 tokens of Qwen3: 155M) trains as fast as a plain torch loop.
KEPT_LOGIT_ELEMENTS = 256 * 1024 * 1024


@dataclass(frozen=True)
class LoraSpec:
    rank: int
    seed: int | None
    train_mlp: bool
    train_attn: bool
    train_unembed: bool

    def target_modules(self) -> list[str]:
        modules: list[str] = []
        if self.train_attn:
            modules += ATTN_MODULES
        if self.train_mlp:
            modules += MLP_MODULES
        if self.train_unembed:
            modules += UNEMBED_MODULES
        if not modules:
            raise EngineError(
                "invalid_lora_config",
                "LoRA trains nothing: set at least one of train_mlp, train_attn, train_unembed",
            )
        return modules


INITIALIZER_RANGE = 0.02  # transformers' Qwen3Config default, the scale of the seeded weights


def _seeded_model(spec: StandInSpec) -> Any:
    """The stand-in with weights drawn from a generator of its own, seeded from the spec.

    Never from torch's process-wide generator: other threads of the process (another service in
    a test run, a user's code) could draw from it meanwhile, and the same id would get other
    weights than in a fresh process. The distributions are transformers' own for Qwen3:
    normal(0, initializer_range) matrices, unit RMSNorm scales, a zero padding row, drawn in the
    order of the sorted parameter names (transformers' names), so the weights are those the
    same draw gives transformers' `Qwen3ForCausalLM`.
    """
    import torch

    from trio_local.engine.qwen3 import CausalLM

    model = CausalLM(spec, device="meta")
    model.to_empty(device="cpu")
    model.retie()
    generator = torch.Generator().manual_seed(spec.seed)
    with torch.no_grad():
        for name, param in sorted(model.named_parameters()):
            if param.ndim >= 2:
                param.normal_(0.0, INITIALIZER_RANGE, generator=generator)
            elif name.endswith("norm.weight"):
                param.fill_(1.0)
            else:  # a new kind of parameter in qwen3.py: decide its init here
                raise EngineError("model_unavailable", f"no seeded init for parameter {name}")
        model.model.embed_tokens.weight[spec.pad_id].zero_()
    return model


def build_base_model(spec: StandInSpec, cache_dir: Path | None = None) -> tuple[Any, bool]:
    """The seeded stand-in and whether it came from the weights cache in `cache_dir`."""
    # Through the import gate: a caller may build while the warm-up thread imports, and a
    # second import meanwhile sees the library half-initialised.
    import_model_libraries("torch")
    path = weights_cache.cache_path(cache_dir, spec) if cache_dir is not None else None
    model = weights_cache.load(path, spec) if path is not None else None
    cached = model is not None
    if model is None:
        model = _seeded_model(spec)
        if path is not None:
            weights_cache.store(path, model)
    model.requires_grad_(False)
    model.eval()
    return model, cached


class ModelHost:
    """A stand-in base model plus named LoRA adapters; one adapter is active at a time."""

    def __init__(self, spec: StandInSpec, cache_dir: Path | None = None) -> None:
        from trio_local.engine.qwen3 import Adapted

        self.spec = spec
        base, self.from_cache = build_base_model(spec, cache_dir)
        self.model = Adapted(base)
        self.adapters: set[str] = set()
        self._add(
            BASE_ADAPTER, LoraSpec(4, 0, train_mlp=False, train_attn=True, train_unembed=False)
        )
        self.model.eval()
        self._active = ""
        self.activate(BASE_ADAPTER)

    def exercise(self) -> None:
        """One throwaway forward and backward pass through a temporary adapter: torch's
        one-time set-up (autograd, kernels) is paid here instead of by the first request. The
        base weights and every other adapter are left as they were."""
        import torch

        name = "_warm_up"
        self.add_adapter(name, LoraSpec(8, 0, train_mlp=True, train_attn=True, train_unembed=False))
        try:
            self.activate(name)
            ids = torch.arange(100, 116).unsqueeze(0)
            with torch.enable_grad():
                hidden = self.hidden_states(ids, None)
                scored = self.token_logprobs(hidden[0], ids[0], grad=True)
                scored.sum().backward()
        finally:
            self.remove_adapter(name)

    @property
    def causal_lm(self) -> Any:
        """The CausalLM inside the adapter wrapper (its layers carry the LoRA adapters)."""
        return self.model.causal_lm

    def embed(self, input_ids: Any) -> Any:
        return self.causal_lm.model.embed_tokens(input_ids)

    def hidden_states(self, input_ids: Any, attention_mask: Any, inputs_embeds: Any = None) -> Any:
        """The last layer's hidden states through the active adapter, [batch, seq, hidden]."""
        return self.causal_lm.model(
            input_ids=None if inputs_embeds is not None else input_ids,
            attention_mask=attention_mask,
            inputs_embeds=inputs_embeds,
        )

    def token_logprobs(self, hidden: Any, targets: Any, *, grad: bool) -> Any:
        """log p(targets[i] | hidden[i]) for rows of hidden [N, H] and targets [N], a slice of
        rows at a time so that at most SLICE_ELEMENTS logits are computed at once; with a
        gradient, slices past KEPT_LOGIT_ELEMENTS are recomputed in the backward pass."""
        import torch
        import torch.nn.functional as F
        from torch.utils.checkpoint import checkpoint

        head = self.causal_lm.lm_head

        def piece(rows: Any, labels: Any) -> Any:
            logits = head(rows).float()
            return -F.cross_entropy(logits, labels, reduction="none")

        step = max(1, SLICE_ELEMENTS // self.spec.vocab_size)
        keep = KEPT_LOGIT_ELEMENTS // self.spec.vocab_size  # rows whose logits may be kept
        recompute = grad and torch.is_grad_enabled()
        parts = []
        for start in range(0, hidden.shape[0], step):
            rows, labels = hidden[start : start + step], targets[start : start + step]
            if recompute and start + rows.shape[0] > keep:
                parts.append(checkpoint(piece, rows, labels, use_reentrant=False))
            else:
                parts.append(piece(rows, labels))
        if not parts:
            return hidden.new_zeros((0,))
        return torch.cat(parts)

    def log_softmax_rows(self, hidden: Any, topk: int) -> tuple[Any, Any | None]:
        """For rows of hidden [N, H] (no gradient): the log-softmax table's top-k per row, by
        slices; returns (values, ids), or (None, None) when topk is 0."""
        import torch

        if topk <= 0:
            return None, None
        head = self.causal_lm.lm_head
        step = max(1, SLICE_ELEMENTS // self.spec.vocab_size)
        values, ids = [], []
        with torch.no_grad():
            for start in range(0, hidden.shape[0], step):
                table = head(hidden[start : start + step]).float().log_softmax(dim=-1)
                top = torch.topk(table, topk, dim=-1)
                values.append(top.values)
                ids.append(top.indices)
        if not values:  # no rows: a one-token prompt has no position to score
            return hidden.new_zeros((0, topk)), torch.zeros((0, topk), dtype=torch.long)
        return torch.cat(values), torch.cat(ids)

    def add_adapter(self, name: str, spec: LoraSpec) -> None:
        if name in self.adapters:
            self.remove_adapter(name)
        self._add(name, spec)
        self._active = ""

    def _add(self, name: str, spec: LoraSpec) -> None:
        self.model.add_adapter(name, spec.target_modules(), spec.rank, LORA_ALPHA)
        self._seed_adapter(name, spec.seed if spec.seed is not None else 0)
        self.adapters.add(name)

    def _seed_adapter(self, name: str, seed: int) -> None:
        """Draw the adapter's lora_A from a generator of its own (peft's kaiming-uniform
        bound, 1/sqrt(fan_in)) and zero its lora_B, so equal seeds give equal runs whatever else
        the process draws from torch's global generator."""
        import torch

        generator = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for key, param in self.parameters(name).items():
                if "lora_A" in key:
                    bound = 1.0 / param.shape[1] ** 0.5
                    param.uniform_(-bound, bound, generator=generator)
                elif "lora_B" in key:
                    param.zero_()

    def remove_adapter(self, name: str) -> None:
        if name in self.adapters and name != BASE_ADAPTER:
            self.activate(BASE_ADAPTER)
            self.model.delete_adapter(name)
            self.adapters.discard(name)

    def activate(self, name: str) -> None:
        if self._active != name:
            self.model.set_adapter(name)
            self._active = name
        if name == BASE_ADAPTER:
            for param in self.parameters(BASE_ADAPTER).values():
                param.requires_grad_(False)

    def parameters(self, name: str) -> dict[str, Any]:
        """The adapter's parameters by name, in a stable order (optimizer state relies on it)."""
        return dict(sorted(self.model.named_adapter_parameters(name).items()))

    def adapter_shapes(self, spec: LoraSpec) -> dict[str, tuple[int, ...]]:
        """The weights an adapter of `spec` has and their shapes, before it exists."""
        return self.model.adapter_shapes(spec.target_modules(), spec.rank)

    def state(self, name: str) -> dict[str, Any]:
        """The adapter's weights, keyed as peft's `get_peft_model_state_dict` keys them."""
        state = self.model.adapter_state(name)
        return {key: value.detach().clone().contiguous() for key, value in state.items()}

    def load_state(self, name: str, state: dict[str, Any]) -> None:
        refused = self.model.load_adapter_state(name, state)
        if refused:
            raise EngineError(
                "checkpoint_invalid",
                f"checkpoint holds weights this adapter does not have: {refused[:3]}",
            )
