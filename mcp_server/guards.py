"""The configured limits, checked before anything reaches the backend.

Each check raises `GuardRefusal`, whose message names the limit and the setting that raises it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from mcp_server.config import Config
from mcp_server.errors import GuardRefusal, InvalidInput, TrioMcpError
from pytrio_facts import LIMITS, LOSSES

# The SDK's own rule for checkpoint names, minus its silent rewrites (spaces to dashes, hashing
# long names): an agent should get back the name it asked for. Matched whole (`fullmatch`): the
# pattern's `$` alone would also accept a name followed by a newline.
CHECKPOINT_NAME = re.compile(LIMITS.checkpoint_name_pattern)
_CONFIG_KEYS: dict[str, tuple[str, ...]] = {loss.name: loss.config_keys for loss in LOSSES}


class Refusals(TrioMcpError):
    """Several checks refused one call: every one is listed, so one retry can fix them all."""

    def __init__(self, problems: list[TrioMcpError]) -> None:
        self.problems = problems
        listed = "; ".join(f"({i}) {p}" for i, p in enumerate(problems, 1))
        super().__init__(f"{len(problems)} problems, fix them all before calling again: {listed}")


def all_of(*checks: Callable[[], object]) -> None:
    """Run every check; refuse once, listing every refusal (a single one is raised as is)."""
    found: list[TrioMcpError] = []
    for check in checks:
        try:
            check()
        except (GuardRefusal, InvalidInput) as exc:
            found.append(exc)
    if len(found) == 1:
        raise found[0]
    if found:
        raise Refusals(found)


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


# Every numeric limit: the setting it comes from (its `max_`/`min_` prefix says which side is
# refused) and what the refusal says about the value. One comparison, in `within`.
BOUNDS: dict[str, str] = {
    "max_rank": "rank {value} is above the maximum",
    "min_rank": "rank {value} is below the minimum",
    "max_learning_rate": "learning_rate {value:g} is above the maximum",
    "min_learning_rate": "learning_rate {value:g} is below the minimum",
    "max_examples_per_call": (
        "{value} examples in one call is above the maximum; split them over several calls"
    ),
    "max_tokens_per_call": "this call would train {value} tokens, above the per-call maximum",
    "max_tokens_per_example": (
        "example {index} is {value} tokens long, above the maximum; shorten it"
    ),
    "max_steps_per_call": "{value} steps in one train_sft call is above the maximum",
    "max_sample_tokens": "max_tokens {value} is above the maximum",
    "max_num_samples": "num_samples {value} is above the maximum",
    "max_checkpoint_name_length": "checkpoint name is {value} characters long, above the maximum",
}


def within(config: Config, setting: str, value: float, **context: object) -> None:
    """Refuse `value` when it is past the configured `setting`, naming the setting."""
    limit = getattr(config, setting)
    if value > limit if setting.startswith("max_") else value < limit:
        raise GuardRefusal(BOUNDS[setting].format(value=value, **context), setting, limit)


def check_rank(config: Config, rank: int) -> None:
    within(config, "max_rank", rank)
    within(config, "min_rank", rank)


def check_learning_rate(config: Config, learning_rate: float) -> None:
    within(config, "max_learning_rate", learning_rate)
    within(config, "min_learning_rate", learning_rate)


def check_examples(config: Config, count: int) -> None:
    within(config, "max_examples_per_call", count)


def check_tokens_per_call(config: Config, tokens: int) -> None:
    within(config, "max_tokens_per_call", tokens)


def check_example_length(config: Config, index: int, tokens: int) -> None:
    within(config, "max_tokens_per_example", tokens, index=index)


def check_steps_per_call(config: Config, steps: int) -> None:
    within(config, "max_steps_per_call", steps)


def check_sampling(config: Config, max_tokens: int, num_samples: int) -> None:
    within(config, "max_sample_tokens", max_tokens)
    within(config, "max_num_samples", num_samples)


def check_checkpoint_name(config: Config, name: str) -> None:
    within(config, "max_checkpoint_name_length", len(name))
    if not CHECKPOINT_NAME.fullmatch(name):
        longest = config.max_checkpoint_name_length
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


# The configured limits as JSON-schema bounds, so tools/list shows the caps that hold, not only
# the SDK's: (argument name, schema keyword, setting). An argument of that name anywhere in a
# tool's input schema (nested models too) gets the tighter of its own bound and the setting. A
# tool field can also name its own: `json_schema_extra={CAP_KEY: {"maximum": "max_..."}}`.
SCHEMA_CAPS: tuple[tuple[str, str, str], ...] = (
    ("steps", "maximum", "max_steps_per_call"),
    ("rank", "maximum", "max_rank"),
    ("rank", "minimum", "min_rank"),
    ("learning_rate", "maximum", "max_learning_rate"),
    ("learning_rate", "minimum", "min_learning_rate"),
    ("max_tokens", "maximum", "max_sample_tokens"),
    ("num_samples", "maximum", "max_num_samples"),
    ("examples", "maxItems", "max_examples_per_call"),
    ("datums", "maxItems", "max_examples_per_call"),
)
CAP_KEY = "x-trio-cap"
_TIGHTER = {"maximum": min, "maxItems": min, "maxLength": min, "minimum": max, "minItems": max}


def cap_schema(schema: dict[str, Any], config: Config) -> dict[str, Any]:
    """`schema` (changed in place and returned) with every configured cap applied."""
    by_name: dict[str, list[tuple[str, str]]] = {}
    for name, keyword, setting in SCHEMA_CAPS:
        by_name.setdefault(name, []).append((keyword, setting))

    def visit(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                visit(item)
            return
        if not isinstance(node, dict):
            return
        for name, prop in (node.get("properties") or {}).items():
            if isinstance(prop, dict):
                rules = list(by_name.get(name, []))
                rules += list((prop.pop(CAP_KEY, None) or {}).items())
                for keyword, setting in rules:
                    _tighten(prop, keyword, getattr(config, setting))
        for value in node.values():
            visit(value)

    visit(schema)
    return schema


def _tighten(prop: dict[str, Any], keyword: str, limit: float) -> None:
    """Apply `keyword: limit` to a property, to each numeric/array branch of an anyOf too."""
    branches = prop.get("anyOf")
    targets = [b for b in branches if isinstance(b, dict)] if branches else [prop]
    for target in targets:
        kind = target.get("type")
        if keyword in ("maxItems", "minItems") and kind != "array":
            continue
        if keyword == "maxLength" and kind != "string":
            continue
        if keyword in ("maximum", "minimum") and kind not in ("integer", "number"):
            continue
        counts = kind == "integer" or keyword in ("maxItems", "minItems", "maxLength")
        value = int(limit) if counts else limit
        old = target.get(keyword)
        target[keyword] = value if old is None else _TIGHTER[keyword](old, value)
