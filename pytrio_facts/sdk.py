"""Core SDK facts for pytrio 0.2.9: version, metric keys, losses, parameter types, limits.

Every value here is checked against the installed SDK by tests/pytrio_facts/test_facts.py, so a
change in pytrio shows up as a failing test rather than as a wrong sentence in the docs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

SDK_DISTRIBUTION = "pytrio"
SDK_VERSION = "0.2.9"
# The range pyproject.toml's `sdk` extra pins; docs name SDK_VERSION, tests run against it.
SDK_PIN = ">=0.2.9,<0.2.10"
IMPORT_LINE = "import pytrio as trio"
CLI_NAME = "trio"

# Environment variables that override the saved profile (config/environment.py).
ENV_VARS: tuple[str, ...] = ("PYTRIO_API_KEY", "PYTRIO_BASE_URL", "PYTRIO_ENV", "PYTRIO_LOG_LEVEL")
DEFAULT_BASE_URL = "https://pytrio.com"

# ForwardBackwardOutput.metrics keys, built by the SDK itself (client/adapters/training.py).
METRIC_KEYS: tuple[str, ...] = ("loss_sum", "loss_mean", "token_count")
# Keys older text used that never exist on 0.2.9 results; the right key for each.
WRONG_METRIC_KEYS: dict[str, str] = {
    "loss:sum": "loss_sum",
    "loss": "loss_mean",
    "train_loss": "loss_mean",
    "loss:mean": "loss_mean",
}

LossName = Literal["cross_entropy", "importance_sampling", "ppo", "cispo", "dro"]


@dataclass(frozen=True)
class LossFact:
    """One built-in loss: the `loss_fn_inputs` keys it requires and whether `weights` count."""

    name: LossName
    required_inputs: tuple[str, ...]
    optional_inputs: tuple[str, ...]
    # Policy losses drop `weights` on the client; mask prompts with advantages=0 instead.
    uses_weights: bool
    summary: str
    # `loss_fn_config` keys the loss reads; the SDK forwards the dict unchecked and the service
    # defines them (the clip thresholds and beta of Tinker's loss documentation).
    config_keys: tuple[str, ...] = ()


LOSSES: tuple[LossFact, ...] = (
    LossFact(
        "cross_entropy",
        ("target_tokens",),
        ("weights",),
        True,
        "supervised next-token loss; weights (default all 1.0) mask prompt tokens",
    ),
    LossFact(
        "importance_sampling",
        ("target_tokens", "logprobs", "advantages"),
        (),
        False,
        "policy gradient with an importance ratio against the sampler's logprobs (GRPO-style)",
    ),
    LossFact(
        "ppo",
        ("target_tokens", "logprobs", "advantages"),
        (),
        False,
        "clipped-ratio policy loss; clip settings go in loss_fn_config (server-defined keys)",
        ("clip_low_threshold", "clip_high_threshold"),
    ),
    LossFact(
        "cispo",
        ("target_tokens", "logprobs", "advantages"),
        (),
        False,
        "clipped importance-sampling policy optimisation (server-defined config)",
        ("clip_low_threshold", "clip_high_threshold"),
    ),
    LossFact(
        "dro",
        ("target_tokens", "logprobs", "advantages"),
        (),
        False,
        "direct reward optimisation style policy loss (server-defined config)",
        ("beta",),
    ),
)
LOSS_NAMES: tuple[str, ...] = tuple(loss.name for loss in LOSSES)
# Loss names are normalised with strip().lower() before the check (client/training_batch.py).
LOSS_NAME_NORMALISATION = "strip().lower()"
# A target of -100 is an ignore label on 0.2.9 (not counted, exempt from the vocab check);
# in model_input it is rejected as out of vocabulary.
IGNORE_TARGET_ID = -100


@dataclass(frozen=True)
class FieldFact:
    """A field of a public pydantic type and its default (`required` when it has none)."""

    name: str
    default: object
    required: bool = False


ADAM_PARAMS: tuple[FieldFact, ...] = (
    FieldFact("learning_rate", 1e-4),
    FieldFact("beta1", 0.9),
    FieldFact("beta2", 0.95),
    FieldFact("eps", 1e-12),
    FieldFact("weight_decay", 0.0),
    FieldFact("grad_clip_norm", 0.0),
)
SAMPLING_PARAMS: tuple[FieldFact, ...] = (
    # None by default, yet every sample call needs max_tokens > 0 (client/sampling.py).
    FieldFact("max_tokens", None),
    FieldFact("seed", None),
    FieldFact("stop", None),
    FieldFact("temperature", 1),
    FieldFact("top_k", -1),
    FieldFact("top_p", 1),
)
# The keys of a sample request's `sampling_params` on the wire: SamplingParams' fields, with a
# list of int `stop` sent as `stop_token_ids` (client/builders/sampling.py).
SAMPLING_WIRE_KEYS: tuple[str, ...] = (
    "max_tokens",
    "seed",
    "stop",
    "stop_token_ids",
    "temperature",
    "top_k",
    "top_p",
)
DATUM_FIELDS: tuple[str, ...] = ("model_input", "loss_fn_inputs")

# Hugging Face / PyTorch spellings and their PyTRIO names (types forbid extra fields).
HF_KEYWORD_RENAMES: dict[str, dict[str, str]] = {
    "AdamParams": {"lr": "learning_rate", "epsilon": "eps"},
    "SamplingParams": {"max_new_tokens": "max_tokens"},
}


@dataclass(frozen=True)
class Limits:
    """Client-side limits that pytrio 0.2.9 checks before anything is sent."""

    lora_rank_min: int = 4
    lora_rank_max: int = 64
    lora_rank_default: int = 32
    checkpoint_name_pattern: str = r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9_-])?$"
    checkpoint_name_max_length: int = 200
    # save_weights_and_get_sampling_client() saves temporary weights that expire after 6 h.
    temporary_sampler_ttl_seconds: int = 6 * 60 * 60
    training_event_queue_capacity: int = 64
    training_event_max_in_flight: int = 16
    # Requests are retried with backoff for up to 15 minutes before an error surfaces.
    retry_window_seconds: int = 900
    # SampleRequest's own bounds (protocol/actor/sampling_run/sample.py): max_tokens > 0,
    # num_samples >= 1, topk_prompt_logprobs >= 0; SamplingParams.top_k = -1 means no limit.
    sample_max_tokens_min: int = 1
    sample_num_samples_min: int = 1
    sample_topk_prompt_logprobs_min: int = 0
    sample_top_k_unlimited: int = -1


LIMITS = Limits()

# Defaults of create_lora_training_client on 0.2.9.
LORA_DEFAULTS: dict[str, object] = {
    "rank": 32,
    "seed": None,
    "train_mlp": True,
    "train_attn": True,
    "train_unembed": True,
}
