"""The tiny Qwen3 stand-in and its LoRA adapters.

One base model per stand-in spec lives in memory, wrapped once by peft; every training run and
every sampler checkpoint is a named peft adapter on it, so a run costs only its adapter and
optimizer state. A frozen zero adapter named `_base` makes the bare base model selectable.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

from trio_local.catalogue import LORA_ALPHA, StandInSpec
from trio_local.engine.errors import EngineError

ATTN_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj")
MLP_MODULES = ("gate_proj", "up_proj", "down_proj")
UNEMBED_MODULES = ("lm_head",)
BASE_ADAPTER = "_base"


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


def build_base_model(spec: StandInSpec) -> Any:
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    config = Qwen3Config(
        vocab_size=spec.vocab_size,
        hidden_size=spec.hidden_size,
        intermediate_size=spec.intermediate_size,
        num_hidden_layers=spec.num_layers,
        num_attention_heads=spec.num_heads,
        num_key_value_heads=spec.num_kv_heads,
        head_dim=spec.head_dim,
        max_position_embeddings=spec.max_positions,
        tie_word_embeddings=True,
        bos_token_id=151643,
        eos_token_id=151645,
        pad_token_id=151643,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(spec.seed)
        model = Qwen3ForCausalLM(config)
    model.requires_grad_(False)
    model.eval()
    return model


class ModelHost:
    """A stand-in base model plus named LoRA adapters; one adapter is active at a time."""

    def __init__(self, spec: StandInSpec) -> None:
        from peft import get_peft_model

        self.spec = spec
        base = build_base_model(spec)
        placeholder = LoraSpec(4, 0, train_mlp=False, train_attn=True, train_unembed=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.model = get_peft_model(base, _lora_config(placeholder), adapter_name=BASE_ADAPTER)
        self.model.eval()
        self._active = BASE_ADAPTER
        self.adapters: set[str] = {BASE_ADAPTER}

    def add_adapter(self, name: str, spec: LoraSpec) -> None:
        import torch

        if name in self.adapters:
            self.remove_adapter(name)
        # The seed fixes lora_A's init (lora_B starts at zero), so equal seeds give equal runs.
        with torch.random.fork_rng(devices=[]), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.manual_seed(spec.seed if spec.seed is not None else 0)
            self.model.add_adapter(name, _lora_config(spec))
        self.adapters.add(name)
        self._active = ""

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
