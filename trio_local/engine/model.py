"""The tiny Qwen3 stand-in and its LoRA adapters.

One base model per model id lives in memory (its weights seeded from the id), wrapped once by
peft; every training run and every sampler checkpoint on that id is a named peft adapter on it,
so a run costs only its adapter and optimizer state. A frozen zero adapter named `_base` makes
the bare base model selectable.

Logits are never materialised for a whole sequence: 8,192 positions x 151,936 vocabulary rows
is 5 GB in float32. `token_logprobs` runs the transformer once, then the unembedding and the
log-softmax a slice of positions at a time (recomputed in the backward pass).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trio_local.catalogue import LORA_ALPHA, StandInSpec
from trio_local.engine import weights_cache
from trio_local.engine.errors import EngineError
from trio_local.engine.libraries import import_model_libraries

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


def _lora_config(spec: LoraSpec) -> Any:
    from peft import LoraConfig

    return LoraConfig(
        r=spec.rank,
        lora_alpha=LORA_ALPHA,
        lora_dropout=0.0,
        bias="none",
        target_modules=spec.target_modules(),
    )


def _config(spec: StandInSpec) -> Any:
    from transformers import Qwen3Config

    return Qwen3Config(
        vocab_size=spec.vocab_size,
        hidden_size=spec.hidden_size,
        intermediate_size=spec.intermediate_size,
        num_hidden_layers=spec.num_layers,
        num_attention_heads=spec.num_heads,
        num_key_value_heads=spec.num_kv_heads,
        head_dim=spec.head_dim,
        max_position_embeddings=spec.max_positions,
        tie_word_embeddings=True,
        bos_token_id=spec.pad_id,
        eos_token_id=spec.eos_id,
        pad_token_id=spec.pad_id,
    )


def _seeded_model(spec: StandInSpec, config: Any) -> Any:
    """The stand-in with weights drawn from a generator of its own, seeded from the spec.

    Never from torch's process-wide generator or transformers' init functions: other threads of
    the process (another service in a test run, a concurrent `from_pretrained`, which switches
    transformers' init off process-wide while it loads) could draw from or patch those meanwhile,
    and the same id would get other weights than in a fresh process. The distributions are
    transformers' own for Qwen3: normal(0, initializer_range) matrices, unit RMSNorm scales, a
    zero padding row.
    """
    import torch
    from transformers import Qwen3ForCausalLM

    with torch.device("meta"):
        model = Qwen3ForCausalLM(config)
    model.to_empty(device="cpu")
    model.tie_weights()
    generator = torch.Generator().manual_seed(spec.seed)
    with torch.no_grad():
        for name, param in sorted(model.named_parameters()):
            if param.ndim >= 2:
                param.normal_(0.0, config.initializer_range, generator=generator)
            elif name.endswith("norm.weight"):
                param.fill_(1.0)
            else:  # a new kind of parameter in a transformers upgrade: decide its init here
                raise EngineError("model_unavailable", f"no seeded init for parameter {name}")
        embed = model.model.embed_tokens
        if embed.padding_idx is not None:
            embed.weight[embed.padding_idx].zero_()
    # The rotary tables are buffers computed from the config, not drawn: compute them afresh.
    model.model.rotary_emb = type(model.model.rotary_emb)(config=config)
    return model


def build_base_model(spec: StandInSpec, cache_dir: Path | None = None) -> tuple[Any, bool]:
    """The seeded stand-in and whether it came from the weights cache in `cache_dir`."""
    # Through the import gate: a caller may build while the warm-up thread imports, and a
    # second import of transformers meanwhile sees it half-initialised.
    import_model_libraries()
    config = _config(spec)
    path = weights_cache.cache_path(cache_dir, spec) if cache_dir is not None else None
    model = weights_cache.load(path, config) if path is not None else None
    cached = model is not None
    if model is None:
        model = _seeded_model(spec, config)
        if path is not None:
            weights_cache.store(path, model)
    model.requires_grad_(False)
    model.eval()
    return model, cached


# What peft says on every build with the pinned libraries, about choices that are trio-local's,
# not the user's: PeftModel reads transformers 5's deprecated `is_gradient_checkpointing`, and
# an adapter on the tied unembedding warns that `ensure_weight_tying` is unset.
KNOWN_WARNINGS: tuple[tuple[type[Warning], str], ...] = (
    (FutureWarning, r"`is_gradient_checkpointing` is deprecated"),
    (UserWarning, r"Model has `tie_word_embeddings=True` and a tied layer is part of the adapter"),
)


def silence_known_warnings() -> None:
    """Filter exactly `KNOWN_WARNINGS`, in front of every other filter: a filter added later
    (`simplefilter("always")`, `-W error`) must not bring them back. Not
    `warnings.catch_warnings()`: it swaps the whole process's filters and puts back its own copy
    on exit, so on the builder and worker threads it could undo another thread's filters or
    leave "ignore all" behind."""
    front = {(f[2], f[1].pattern) for f in warnings.filters[: len(KNOWN_WARNINGS)] if f[1]}
    if front != set(KNOWN_WARNINGS):
        for category, message in KNOWN_WARNINGS:  # moved to the front if already present
            warnings.filterwarnings("ignore", message=message, category=category)


class ModelHost:
    """A stand-in base model plus named LoRA adapters; one adapter is active at a time."""

    def __init__(self, spec: StandInSpec, cache_dir: Path | None = None) -> None:
        import_model_libraries()  # see build_base_model
        from peft import get_peft_model

        self.spec = spec
        base, self.from_cache = build_base_model(spec, cache_dir)
        placeholder = LoraSpec(4, 0, train_mlp=False, train_attn=True, train_unembed=False)
        silence_known_warnings()
        self.model = get_peft_model(base, _lora_config(placeholder), adapter_name=BASE_ADAPTER)
        self._seed_adapter(BASE_ADAPTER, 0)
        self.model.eval()
        self._active = BASE_ADAPTER
        self.adapters: set[str] = {BASE_ADAPTER}

    def exercise(self) -> None:
        """One throwaway forward and backward pass through a temporary adapter: torch's
        one-time set-up (autograd, kernels, peft's layers) is paid here instead of by the first
        request. The base weights and every other adapter are left as they were."""
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
        """The Qwen3ForCausalLM inside peft's wrapper (its layers carry the LoRA adapters)."""
        return self.model.base_model.model

    def embed(self, input_ids: Any) -> Any:
        return self.causal_lm.model.embed_tokens(input_ids)

    def hidden_states(self, input_ids: Any, attention_mask: Any, inputs_embeds: Any = None) -> Any:
        """The last layer's hidden states through the active adapter, [batch, seq, hidden]."""
        return self.causal_lm.model(
            input_ids=None if inputs_embeds is not None else input_ids,
            inputs_embeds=inputs_embeds,
            attention_mask=attention_mask,
            use_cache=False,
        ).last_hidden_state

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
        return torch.cat(values), torch.cat(ids)

    def add_adapter(self, name: str, spec: LoraSpec) -> None:
        if name in self.adapters:
            self.remove_adapter(name)
        silence_known_warnings()
        self.model.add_adapter(name, _lora_config(spec))
        self._seed_adapter(name, spec.seed if spec.seed is not None else 0)
        self.adapters.add(name)
        self._active = ""

    def _seed_adapter(self, name: str, seed: int) -> None:
        """Redraw the adapter's lora_A from a generator of its own (peft's kaiming-uniform
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
        marker = f".{name}."
        return {
            key: param
            for key, param in sorted(self.model.named_parameters())
            if marker in key and "lora_" in key
        }

    def state(self, name: str) -> dict[str, Any]:
        from peft import get_peft_model_state_dict

        # The tied lm_head makes peft offer to save the whole embedding; the adapter is enough.
        state = get_peft_model_state_dict(
            self.model, adapter_name=name, save_embedding_layers=False
        )
        return {key: value.detach().clone().contiguous() for key, value in state.items()}

    def load_state(self, name: str, state: dict[str, Any]) -> None:
        from peft import set_peft_model_state_dict

        result = set_peft_model_state_dict(self.model, state, adapter_name=name)
        unexpected = getattr(result, "unexpected_keys", [])
        if unexpected:
            raise EngineError(
                "checkpoint_invalid",
                f"checkpoint holds weights this adapter does not have: {unexpected[:3]}",
            )
