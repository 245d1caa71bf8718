"""A new run's model: which id it gets, its build started early, its tokenizer ready in time."""

from __future__ import annotations

import asyncio

from trio_local import catalogue
from trio_local.engine.engine import Engine
from trio_local.errors import ApiError
from trio_local.tokenizers import Tokenizers


class ModelSetup:
    def __init__(self, engine: Engine, tokenizers: Tokenizers, models: tuple[str, ...]) -> None:
        self._engine = engine
        self._tokenizers = tokenizers
        self._models = models  # --models: the ids served (empty: any Qwen id)

    def served(self, base_model: str) -> catalogue.CatalogueEntry:
        """The entry of an id a client asks for by name (--models applies)."""
        try:
            return catalogue.resolve(base_model, self._models)
        except catalogue.ModelNotServed as error:
            raise ApiError(404, "model_not_found", str(error)) from None

    @staticmethod
    def of_checkpoint(model_id: str) -> catalogue.CatalogueEntry:
        """A checkpoint's own model, whatever --models says."""
        return catalogue.resolve(model_id)

    def prepare(self, entry: catalogue.CatalogueEntry) -> None:
        """Start building the model now, while the client loads its tokenizer."""
        self._engine.prepare(entry)

    async def tokenizer_ready(self, entry: catalogue.CatalogueEntry) -> None:
        # The SDK loads the tokenizer right after creating a run; it must exist by then, under
        # the id's own name in the modelscope cache (else the SDK would try a hub download).
        try:
            await asyncio.wrap_future(self._tokenizers.ready(entry.family))
            self._tokenizers.seed(entry)
        except Exception as error:
            raise ApiError(
                400,
                "tokenizer_unavailable",
                f"the {entry.family.name} tokenizer build failed: {error}",
            ) from None
