"""The model catalogue: the names users write, each backed locally by a tiny stand-in.

Every id shares one stand-in architecture (transformers' Qwen3 classes with Qwen3's real
151,936-row vocabulary, two layers, hidden size 256, fixed seed), so runs on different ids share
one base model in memory and differ only in their LoRA adapters.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime


@dataclass(frozen=True)
class StandInSpec:
    """The shape of the random-init base model that stands in for a catalogue id."""

    vocab_size: int = 151_936
    hidden_size: int = 256
    intermediate_size: int = 512
    num_layers: int = 2
    num_heads: int = 4
    num_kv_heads: int = 2
    head_dim: int = 64
    max_positions: int = 4096
    seed: int = 0


@dataclass(frozen=True)
class RunnerLimits:
    max_batch_size: int
    max_tokens_per_request: int
    max_seq_len: int


@dataclass(frozen=True)
class CatalogueEntry:
    model_id: str
    family: str
    parameter_size: str
    context_length: int


STAND_IN = StandInSpec()
# Logits over the full vocabulary cost ~0.6 MB per token in float32, so requests stay small;
# the SDK splits bigger batches into several events from these numbers.
TRAINER_LIMITS = RunnerLimits(max_batch_size=32, max_tokens_per_request=1024, max_seq_len=1024)
SAMPLER_LIMITS = RunnerLimits(max_batch_size=16, max_tokens_per_request=2048, max_seq_len=2048)
LORA_ALPHA = 32
CATALOGUE_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)

ENTRIES: tuple[CatalogueEntry, ...] = (
    CatalogueEntry("Qwen/Qwen3-4B-Instruct-2507", "qwen3", "4B", 262_144),
    CatalogueEntry("Qwen/Qwen3-30B-A3B-Instruct-2507", "qwen3_moe", "30B-A3B", 262_144),
    CatalogueEntry("Qwen/Qwen3-235B-A22B-Instruct-2507", "qwen3_moe", "235B-A22B", 262_144),
    CatalogueEntry("Qwen/Qwen3-8B", "qwen3", "8B", 131_072),
    CatalogueEntry("Qwen/Qwen3-32B", "qwen3", "32B", 131_072),
)
DEFAULT_MODEL = ENTRIES[0].model_id


def description(entry: CatalogueEntry) -> str:
    return (
        f"trio-local stand-in for {entry.model_id}: a tiny random-init Qwen3-architecture model "
        f"({STAND_IN.num_layers} layers, hidden {STAND_IN.hidden_size}, Qwen3's real "
        f"{STAND_IN.vocab_size:,}-entry vocabulary and chat format, seed {STAND_IN.seed}) that "
        "trains LoRA adapters on the CPU. It is not the real model: its outputs mean nothing "
        "until you train it."
    )


def find(name: str) -> CatalogueEntry | None:
    """Look a model up by id, case-insensitively (users type ids by hand)."""
    wanted = name.strip().lower()
    for entry in ENTRIES:
        if entry.model_id.lower() == wanted:
            return entry
    return None


def known_ids() -> list[str]:
    return [entry.model_id for entry in ENTRIES]
