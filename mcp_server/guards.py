"""The configured limits, checked before anything reaches the backend.

Each check raises `GuardRefusal`, whose message names the limit and the setting that raises it.
"""

from __future__ import annotations

import re

from mcp_server.config import Config
from mcp_server.errors import GuardRefusal, InvalidInput
from pytrio_facts import LIMITS, LOSSES

# The SDK's own rule for checkpoint names, minus its silent rewrites (spaces to dashes, hashing
# long names): an agent should get back the name it asked for. Matched whole (`fullmatch`): the
# pattern's `$` alone would also accept a name followed by a newline.
CHECKPOINT_NAME = re.compile(LIMITS.checkpoint_name_pattern)
_CONFIG_KEYS = {loss.name: loss.config_keys for loss in LOSSES}


def require_writable(config: Config, tool: str) -> None:
    if config.read_only:
        raise GuardRefusal(
            f"{tool} changes state and the server is in read-only mode", "read_only", True
        )


def require_delete_allowed(config: Config) -> None:
    require_writable(config, "delete_checkpoint")
    if not config.allow_delete:
        raise GuardRefusal("deleting checkpoints is switched off", "allow_delete", False)


def check_model(config: Config, base_model: str, offered: list[str]) -> None:
    if config.allowed_models and base_model not in config.allowed_models:
        raise GuardRefusal(
            f"base model {base_model!r} is not allowed (allowed: "
            f"{', '.join(config.allowed_models)})",
            "allowed_models",
            config.allowed_models,
        )
    if offered and base_model not in offered:
        raise InvalidInput(
            f"base_model {base_model!r} is not offered by the backend; call list_models and use "
            f"one of: {', '.join(offered)}"
        )


def check_rank(config: Config, rank: int) -> None:
    if rank > config.max_rank:
        raise GuardRefusal(f"rank {rank} is above the maximum", "max_rank", config.max_rank)
    if rank < config.min_rank:
        raise GuardRefusal(f"rank {rank} is below the minimum", "min_rank", config.min_rank)


def check_learning_rate(config: Config, learning_rate: float) -> None:
    if learning_rate > config.max_learning_rate:
        raise GuardRefusal(
            f"learning_rate {learning_rate:g} is above the maximum",
            "max_learning_rate",
            config.max_learning_rate,
        )
    if learning_rate < config.min_learning_rate:
        raise GuardRefusal(
            f"learning_rate {learning_rate:g} is below the minimum",
            "min_learning_rate",
            config.min_learning_rate,
        )


def check_examples(config: Config, count: int) -> None:
    if count > config.max_examples_per_call:
        raise GuardRefusal(
            f"{count} examples in one call is above the maximum; split them over several calls",
            "max_examples_per_call",
            config.max_examples_per_call,
        )


def check_tokens_per_call(config: Config, tokens: int) -> None:
    if tokens > config.max_tokens_per_call:
        raise GuardRefusal(
            f"this call would train {tokens} tokens, above the per-call maximum",
            "max_tokens_per_call",
            config.max_tokens_per_call,
        )


def check_example_length(config: Config, index: int, tokens: int) -> None:
    if tokens > config.max_tokens_per_example:
        raise GuardRefusal(
            f"example {index} is {tokens} tokens long, above the maximum; shorten it",
            "max_tokens_per_example",
            config.max_tokens_per_example,
        )


def check_steps_per_call(config: Config, steps: int) -> None:
    if steps > config.max_steps_per_call:
        raise GuardRefusal(
            f"{steps} steps in one train_sft call is above the maximum",
            "max_steps_per_call",
            config.max_steps_per_call,
        )


def check_sampling(config: Config, max_tokens: int, num_samples: int) -> None:
    if max_tokens > config.max_sample_tokens:
        raise GuardRefusal(
            f"max_tokens {max_tokens} is above the maximum",
            "max_sample_tokens",
            config.max_sample_tokens,
        )
    if num_samples > config.max_num_samples:
        raise GuardRefusal(
            f"num_samples {num_samples} is above the maximum",
            "max_num_samples",
            config.max_num_samples,
        )


def check_checkpoint_name(config: Config, name: str) -> None:
    longest = config.max_checkpoint_name_length
    if len(name) > longest:
        raise GuardRefusal(
            f"checkpoint name is {len(name)} characters long, above the maximum",
            "max_checkpoint_name_length",
            longest,
        )
    if not CHECKPOINT_NAME.fullmatch(name):
        raise InvalidInput(
            f"checkpoint name {name!r} is invalid: use 1-{longest} letters, digits, '.', '_' or "
            "'-', starting with a letter or digit and not ending with '.' (for example 'step-20')"
        )


def check_loss_config(loss: str, config: dict[str, float] | None) -> None:
    """Only the keys the loss reads: a misspelt clip threshold must not silently use the default."""
    known = _CONFIG_KEYS.get(loss, ())
    unknown = sorted(set(config or {}) - set(known))
    if unknown:
        accepted = ", ".join(known) if known else "none: leave loss_fn_config out"
        raise InvalidInput(
            f"loss_fn_config key(s) {', '.join(map(repr, unknown))} are not used by loss "
            f"{loss!r} (accepted: {accepted})"
        )
