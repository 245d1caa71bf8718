"""Model ids. The real catalogue is the server's: read it with `get_supported_models()`."""

from __future__ import annotations

# The id the skill's examples default to (an Instruct model; chat templates assume one).
DEFAULT_BASE_MODEL = "Qwen/Qwen3-4B-Instruct-2507"
# Ids the offline service (trio-local) announces, each backed by its tiny stand-in model; the
# real service's catalogue changes over time, so code should never hard-code it.
MODEL_CATALOGUE: tuple[str, ...] = (
    DEFAULT_BASE_MODEL,
    "Qwen/Qwen3-30B-A3B-Instruct-2507",
    "Qwen/Qwen3-235B-A22B-Instruct-2507",
    "Qwen/Qwen3-8B",
    "Qwen/Qwen3-32B",
)
