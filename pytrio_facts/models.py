"""Model ids. The real catalogue is the server's: read it with `get_supported_models()`."""

from __future__ import annotations

# The id the skill's examples default to (an Instruct model; chat templates assume one).
DEFAULT_BASE_MODEL = "Qwen/Qwen3-4B-Instruct-2507"
# The id in pytrio 0.2.9's own README (its `create_lora_training_client` example).
SDK_README_MODEL = "Qwen/Qwen3.5-4B"
# Ids the offline service (trio-local) announces, each backed by its tiny stand-in model: the
# SDK README's model and current Qwen3 / Qwen3.5 / Qwen3.6 ids that public scripts name. The
# real service's catalogue changes over time, so code should never hard-code it, and this list
# says nothing about what the real service trains (trio-local serves any Qwen `Org/Name` id).
MODEL_CATALOGUE: tuple[str, ...] = (
    DEFAULT_BASE_MODEL,
    SDK_README_MODEL,
    "Qwen/Qwen3-0.6B",
    "Qwen/Qwen3-1.7B",
    "Qwen/Qwen3-4B",
    "Qwen/Qwen3-8B",
    "Qwen/Qwen3-14B",
    "Qwen/Qwen3-32B",
    "Qwen/Qwen3-30B-A3B",
    "Qwen/Qwen3-235B-A22B",
    "Qwen/Qwen3-4B-Thinking-2507",
    "Qwen/Qwen3-30B-A3B-Instruct-2507",
    "Qwen/Qwen3-235B-A22B-Instruct-2507",
    "Qwen/Qwen3.5-0.8B",
    "Qwen/Qwen3.5-2B",
    "Qwen/Qwen3.5-9B",
    "Qwen/Qwen3.5-27B",
    "Qwen/Qwen3.5-35B-A3B",
    "Qwen/Qwen3.5-122B-A10B",
    "Qwen/Qwen3.5-397B-A17B",
    "Qwen/Qwen3.6-27B",
    "Qwen/Qwen3.6-35B-A3B",
)
