"""Model ids. The real catalogue is the server's: read it with `get_supported_models()`."""

from __future__ import annotations

# The id the skill's examples default to and that the offline service (trio-local) announces.
DEFAULT_BASE_MODEL = "Qwen/Qwen3-4B-Instruct-2507"
# Ids that trio-local serves (a tiny stand-in model with the Qwen3 tokenizer behind each).
MODEL_CATALOGUE: tuple[str, ...] = (DEFAULT_BASE_MODEL,)
