"""Sampling runs: a base model or a saved sampler checkpoint, created in a session."""

from __future__ import annotations

from pytrio.protocol.control.sampling_run.create import SamplingRunCreateRequest

from trio_local.errors import ApiError, not_found
from trio_local.service.checkpoints import Checkpoints
from trio_local.service.models import ModelSetup
from trio_local.storage.db import Store
from trio_local.storage.rows import SamplingRunRow


class SamplingRuns:
    def __init__(self, store: Store, models: ModelSetup, checkpoints: Checkpoints) -> None:
        self._store = store
        self._models = models
        self._checkpoints = checkpoints

    def get(self, ident: str) -> SamplingRunRow:
        row = self._store.sampling_run(ident)
        if row is None:
            raise not_found("sampling run", ident)
        return row

    async def create(self, session_cuid: str, body: SamplingRunCreateRequest) -> SamplingRunRow:
        uri = body.source_checkpoint_uri
        if uri:
            self._checkpoints.sweep_expired()
            saved = self._checkpoints.by_uri(uri)
            if saved is None:
                raise ApiError(
                    404,
                    "checkpoint_not_found",
                    f"no checkpoint at '{uri}' (deleted, expired, or never saved); save one "
                    "with save_weights_for_sampler",
                )
            entry = self._models.of_checkpoint(saved.model_id)
        else:
            entry = self._models.served(body.base_model)
        self._models.prepare(entry)
        # A sampling script may load the tokenizer for the sampler's id (get_tokenizer).
        await self._models.tokenizer_ready(entry)
        return self._store.create_sampling_run(session_cuid, entry.model_id, uri)
