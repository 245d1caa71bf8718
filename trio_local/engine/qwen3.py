"""Qwen3's decoder and LoRA adapters in plain torch: the stand-in's architecture, without
transformers or peft.

Importing transformers' Qwen3 model class and peft costs a service process about 2.5 s of CPU
on top of torch (transformers 5.25, peft 0.21), paid again by every `trio-local run`; the
stand-in needs only these few layers. The computation is transformers' `Qwen3ForCausalLM`
(RMSNorm on the hidden size and on each head's queries and keys, rotary positions with
theta 10,000, grouped-query attention, SwiGLU, tied unembedding) and the module and parameter
names are transformers' and peft's, so weight files and adapter checkpoints keep their keys:
`base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight`. The tests compare both
against transformers and peft.

Names of a LoRA layer follow peft: the frozen weight is `base_layer.weight`, an adapter's are
`lora_A.<adapter>.weight` and `lora_B.<adapter>.weight`; only the active adapter is applied,
scaled by alpha / rank.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from trio_local.catalogue import StandInSpec

ROPE_THETA = 10_000.0  # Qwen3Config's default (rope_parameters), which the stand-in keeps
RMS_NORM_EPS = 1e-6
Device = str | None
Rotary = tuple[torch.Tensor, torch.Tensor]  # cos and sin of the positions' angles
LayerCache = list[torch.Tensor] | None  # a layer's [keys, values] so far, or no caching


class RMSNorm(nn.Module):
    def __init__(self, size: int, device: Device = None) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size, device=device))

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        dtype = hidden.dtype
        hidden = hidden.to(torch.float32)
        hidden = hidden * torch.rsqrt(hidden.pow(2).mean(-1, keepdim=True) + RMS_NORM_EPS)
        return self.weight * hidden.to(dtype)


class LoraLinear(nn.Module):
    """A linear layer without bias plus named low-rank adapters, one of them active."""

    def __init__(self, base: nn.Linear) -> None:
        super().__init__()
        self.base_layer = base
        self.lora_A = nn.ModuleDict()
        self.lora_B = nn.ModuleDict()
        self.scaling: dict[str, float] = {}
        self.active: str | None = None

    @property
    def weight(self) -> torch.Tensor:
        return self.base_layer.weight

    def add(self, name: str, rank: int, alpha: float) -> None:
        """A new adapter of zeros (inert until its caller draws lora_A): nn.Linear's own init
        would draw from torch's global generator, 2.4M numbers for a rank-16 adapter on the
        unembedding, only to be overwritten."""
        base = self.base_layer
        self.lora_A[name] = _zeros(base.in_features, rank)
        self.lora_B[name] = _zeros(rank, base.out_features)
        self.scaling[name] = alpha / rank

    def remove(self, name: str) -> None:
        del self.lora_A[name], self.lora_B[name]
        self.scaling.pop(name, None)
        if self.active == name:
            self.active = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result = self.base_layer(x)
        name = self.active
        if name is None or name not in self.lora_A:
            return result
        return result + self.lora_B[name](self.lora_A[name](x)) * self.scaling[name]


def _linear(n_in: int, n_out: int, device: Device = None) -> nn.Linear:
    return nn.Linear(n_in, n_out, bias=False, device=device)


def _zeros(n_in: int, n_out: int) -> nn.Linear:
    # Built on meta (no init, nothing allocated), then given its weight. Not `to_empty`: its
    # first call in a process costs about 0.4 s of CPU (torch 2.13).
    layer = _linear(n_in, n_out, "meta")
    layer.weight = nn.Parameter(torch.zeros(n_out, n_in))
    return layer


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Attention(nn.Module):
    def __init__(self, spec: StandInSpec, device: Device = None) -> None:
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = (
            spec.num_heads,
            spec.num_kv_heads,
            spec.head_dim,
        )
        self.q_proj = _linear(spec.hidden_size, spec.num_heads * spec.head_dim, device)
        self.k_proj = _linear(spec.hidden_size, spec.num_kv_heads * spec.head_dim, device)
        self.v_proj = _linear(spec.hidden_size, spec.num_kv_heads * spec.head_dim, device)
        self.o_proj = _linear(spec.num_heads * spec.head_dim, spec.hidden_size, device)
        self.q_norm = RMSNorm(spec.head_dim, device)
        self.k_norm = RMSNorm(spec.head_dim, device)

    def forward(
        self, hidden: torch.Tensor, rotary: Rotary, mask: torch.Tensor | None, cache: LayerCache
    ) -> torch.Tensor:
        batch, length, _ = hidden.shape
        per_head = (batch, length, -1, self.head_dim)
        query = self.q_norm(self.q_proj(hidden).view(per_head)).transpose(1, 2)
        key = self.k_norm(self.k_proj(hidden).view(per_head)).transpose(1, 2)
        value = self.v_proj(hidden).view(per_head).transpose(1, 2)
        cos, sin = rotary
        query = query * cos + _rotate_half(query) * sin
        key = key * cos + _rotate_half(key) * sin
        if cache is not None:  # [key, value] of the positions before, extended in place
            if cache:
                key = torch.cat((cache[0], key), dim=2)
                value = torch.cat((cache[1], value), dim=2)
            cache[:] = [key, value]
        repeat = self.heads // self.kv_heads
        key = key.repeat_interleave(repeat, dim=1)
        value = value.repeat_interleave(repeat, dim=1)
        causal = mask is None and query.shape[2] == key.shape[2] and query.shape[2] > 1
        out = F.scaled_dot_product_attention(
            query, key, value, attn_mask=mask, is_causal=causal, scale=self.head_dim**-0.5
        )
        return self.o_proj(out.transpose(1, 2).reshape(batch, length, -1))


class MLP(nn.Module):
    def __init__(self, spec: StandInSpec, device: Device = None) -> None:
        super().__init__()
        self.gate_proj = _linear(spec.hidden_size, spec.intermediate_size, device)
        self.up_proj = _linear(spec.hidden_size, spec.intermediate_size, device)
        self.down_proj = _linear(spec.intermediate_size, spec.hidden_size, device)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, spec: StandInSpec, device: Device = None) -> None:
        super().__init__()
        self.self_attn = Attention(spec, device)
        self.mlp = MLP(spec, device)
        self.input_layernorm = RMSNorm(spec.hidden_size, device)
        self.post_attention_layernorm = RMSNorm(spec.hidden_size, device)

    def forward(
        self, hidden: torch.Tensor, rotary: Rotary, mask: torch.Tensor | None, cache: LayerCache
    ) -> torch.Tensor:
        hidden = hidden + self.self_attn(self.input_layernorm(hidden), rotary, mask, cache)
        return hidden + self.mlp(self.post_attention_layernorm(hidden))


class Decoder(nn.Module):
    """transformers' `Qwen3Model`: embedding, layers, final norm."""

    def __init__(self, spec: StandInSpec, device: Device = None) -> None:
        super().__init__()
        self.spec = spec
        # Given its weight, the embedding skips its own init: a normal_() on the meta device
        # goes through torch's Python reference ops, which import torch._dynamo (and sympy),
        # about 1.5 s of CPU (torch 2.13). The weights are drawn or loaded by the caller.
        rows = torch.empty(spec.vocab_size, spec.hidden_size, device=device)
        self.embed_tokens = nn.Embedding(
            spec.vocab_size, spec.hidden_size, spec.pad_id, _weight=rows
        )
        self.layers = nn.ModuleList(DecoderLayer(spec, device) for _ in range(spec.num_layers))
        self.norm = RMSNorm(spec.hidden_size, device)
        self.register_buffer("inv_freq", inverse_frequencies(spec.head_dim), persistent=False)

    def rotary(self, start: int, length: int, dtype: torch.dtype) -> Rotary:
        positions = torch.arange(start, start + length, dtype=torch.float)
        freqs = positions[:, None] * self.inv_freq[None, :]
        angles = torch.cat((freqs, freqs), dim=-1)
        return angles.cos().to(dtype), angles.sin().to(dtype)

    def forward(
        self,
        input_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        inputs_embeds: torch.Tensor | None = None,
        cache: list[list[torch.Tensor]] | None = None,
    ) -> torch.Tensor:
        """The last layer's normed hidden states, [batch, seq, hidden]. `attention_mask`
        [batch, seq] marks real tokens with 1; `cache` (one list per layer) holds the keys and
        values of earlier positions and is extended with these."""
        hidden = self.embed_tokens(input_ids) if inputs_embeds is None else inputs_embeds
        start = cache[0][0].shape[2] if cache and cache[0] else 0
        rotary = self.rotary(start, hidden.shape[1], hidden.dtype)
        mask = None
        if attention_mask is not None and not bool(attention_mask.all()):
            mask = _padded_causal_mask(attention_mask.bool(), start, hidden.shape[1])
        elif start and hidden.shape[1] > 1:  # new tokens after cached ones: still causal
            real = torch.ones(hidden.shape[0], start + hidden.shape[1], dtype=torch.bool)
            mask = _padded_causal_mask(real, start, hidden.shape[1])
        for index, layer in enumerate(self.layers):
            hidden = layer(hidden, rotary, mask, cache[index] if cache is not None else None)
        return self.norm(hidden)


def inverse_frequencies(head_dim: int) -> torch.Tensor:
    """The rotary frequencies: computed, never stored (a non-persistent buffer)."""
    steps = torch.arange(0, head_dim, 2, dtype=torch.float) / head_dim
    return 1.0 / (ROPE_THETA**steps)


def _padded_causal_mask(real: torch.Tensor, start: int, length: int) -> torch.Tensor:
    """[batch, 1, length, start + length]: a query sees earlier real keys. Each query also sees
    itself, so that a padding position's row is never empty (softmax over nothing is NaN, and
    a NaN times a zero loss weight is still NaN); real positions are unaffected by it."""
    query_at = torch.arange(start, start + length)[:, None]
    key_at = torch.arange(real.shape[1])[None, :]  # the mask covers earlier positions too
    allowed = (key_at <= query_at) & real[:, None, :]
    allowed |= key_at == query_at
    return allowed[:, None, :, :]


@dataclass
class CausalOutput:
    logits: torch.Tensor
    cache: list[list[torch.Tensor]] | None


class CausalLM(nn.Module):
    """transformers' `Qwen3ForCausalLM` with the unembedding tied to the embedding."""

    def __init__(self, spec: StandInSpec, device: Device = None) -> None:
        """Built on `device` ("meta": nothing allocated, for weights drawn or loaded next)."""
        super().__init__()
        self.model = Decoder(spec, device)
        self.lm_head: nn.Module = _linear(spec.hidden_size, spec.vocab_size, device)
        self.lm_head.weight = self.model.embed_tokens.weight

    def retie(self) -> None:
        """After the weights were put in place (`to_empty`, or a load with `assign=True`): the
        unembedding is the embedding again, and the rotary frequencies, a buffer never stored,
        are computed."""
        self.lm_head.weight = self.model.embed_tokens.weight
        self.model.inv_freq = inverse_frequencies(self.model.spec.head_dim)

    def forward(
        self,
        input_ids: torch.Tensor | None = None,
        inputs_embeds: torch.Tensor | None = None,
        cache: list[list[torch.Tensor]] | None = None,
        logits_to_keep: int = 0,
    ) -> CausalOutput:
        """Logits of the last `logits_to_keep` positions (0: all) and the extended cache; a
        new cache is started when none is given."""
        if cache is None:
            cache = [[] for _ in self.model.layers]
        hidden = self.model(input_ids, None, inputs_embeds, cache)
        return CausalOutput(self.lm_head(hidden[:, -logits_to_keep:]), cache)


class Adapted(nn.Module):
    """peft's `PeftModel` layout around a CausalLM: `base_model.model.<name>`, with LoRA layers
    in place of the target linears."""

    def __init__(self, causal_lm: CausalLM) -> None:
        super().__init__()
        self.base_model = nn.Module()
        self.base_model.model = causal_lm
        self.lora_layers: dict[str, list[LoraLinear]] = {}  # target module name -> layers

    @property
    def causal_lm(self) -> CausalLM:
        return self.base_model.model

    def _targets(self, suffix: str) -> list[LoraLinear]:
        if suffix not in self.lora_layers:
            layers = []
            for parent in list(self.causal_lm.modules()):
                child = getattr(parent, suffix, None)
                if isinstance(child, nn.Linear):
                    wrapped = LoraLinear(child)
                    setattr(parent, suffix, wrapped)
                    layers.append(wrapped)
            self.lora_layers[suffix] = layers
        return self.lora_layers[suffix]

    def add_adapter(self, name: str, targets: list[str], rank: int, alpha: float) -> None:
        for suffix in targets:
            for layer in self._targets(suffix):
                layer.add(name, rank, alpha)

    def adapter_shapes(self, targets: list[str], rank: int) -> dict[str, tuple[int, ...]]:
        """The weights an adapter on `targets` of `rank` has, keyed as `adapter_state` keys
        them, with their shapes: computed from the base layers, nothing allocated."""
        shapes: dict[str, tuple[int, ...]] = {}
        for path, module in self.named_modules():
            if path.rsplit(".", 1)[-1] not in targets:
                continue
            base = module.base_layer if isinstance(module, LoraLinear) else module
            if isinstance(base, nn.Linear):
                shapes[f"{path}.lora_A.weight"] = (rank, base.in_features)
                shapes[f"{path}.lora_B.weight"] = (base.out_features, rank)
        return dict(sorted(shapes.items()))

    def delete_adapter(self, name: str) -> None:
        for layers in self.lora_layers.values():
            for layer in layers:
                if name in layer.lora_A:
                    layer.remove(name)

    def set_adapter(self, name: str) -> None:
        """Apply `name` only; its weights alone take gradients (peft's `set_adapter`)."""
        for layers in self.lora_layers.values():
            for layer in layers:
                layer.active = name
                for adapter in layer.lora_A:
                    trains = adapter == name
                    layer.lora_A[adapter].weight.requires_grad_(trains)
                    layer.lora_B[adapter].weight.requires_grad_(trains)

    def named_adapter_parameters(self, name: str) -> dict[str, nn.Parameter]:
        """Adapter `name`'s parameters under its full names (`...lora_A.<name>.weight`)."""
        marks = (f".lora_A.{name}.", f".lora_B.{name}.")
        return {
            key: param
            for key, param in self.named_parameters()
            if any(mark in key for mark in marks)
        }

    def adapter_state(self, name: str) -> dict[str, torch.Tensor]:
        """peft's `get_peft_model_state_dict`: the adapter's weights, named without it."""
        return {
            _without(key, name): param.detach()
            for key, param in self.named_adapter_parameters(name).items()
        }

    def load_adapter_state(self, name: str, state: dict[str, Any]) -> list[str]:
        """Copy `state` (keys as `adapter_state` gives them) into adapter `name`, all or
        nothing; returns what does not fit: keys of no weight of this adapter (another
        adapter's, the base model's, a foreign one) and weights of another shape. Keys it lacks
        leave those weights as they are (peft's `set_peft_model_state_dict` does the same)."""
        own = {_without(key, name): p for key, p in self.named_adapter_parameters(name).items()}
        refused = [key for key in state if key not in own]
        refused += [
            f"{key} (shape {tuple(value.shape)}, the adapter's is {tuple(own[key].shape)})"
            for key, value in state.items()
            if key in own and tuple(value.shape) != tuple(own[key].shape)
        ]
        if not refused:
            with torch.no_grad():
                for key, value in state.items():
                    own[key].copy_(value)
        return refused


def _without(key: str, name: str) -> str:
    return key.replace(f".lora_A.{name}.", ".lora_A.").replace(f".lora_B.{name}.", ".lora_B.")
