"""Training runs: created in a session (admitted against --max-runs), pointed at a checkpoint
before init_run (the SDK's load_state), found by a checkpoint, listed."""

from __future__ import annotations

from pytrio.protocol.control.training_run.create import TrainingRunCreateRequest

from trio_local.errors import ApiError, not_found
from trio_local.liveness import Liveness
from trio_local.protocol import bounds
from trio_local.service.checkpoints import Checkpoints
from trio_local.service.models import ModelSetup
from trio_local.storage.db import Page, Store
from trio_local.storage.rows import CheckpointRow, NewTrainingRun, TrainingRunRow


class TrainingRuns:
    def __init__(
        self, store: Store, liveness: Liveness, models: ModelSetup, checkpoints: Checkpoints
    ) -> None:
        self._store = store
        self._liveness = liveness
        self._models = models
        self._checkpoints = checkpoints

    def get(self, ident: str) -> TrainingRunRow:
        row = self._store.training_run(ident)
        if row is None:
            raise not_found("training run", ident)
        return row

    def page(self, limit: int, offset: int) -> Page[TrainingRunRow]:
        return self._store.training_runs(limit, offset)

    def checkpoint(self, uri: str) -> CheckpointRow:
        row = self._checkpoints.by_uri(uri)
        if row is None:
            raise ApiError(
                404,
                "checkpoint_not_found",
                f"no checkpoint at '{uri}'; list them with RestClient.list_user_checkpoints()",
            )
        return row

    async def create(self, session_cuid: str, body: TrainingRunCreateRequest) -> TrainingRunRow:
        if body.source_checkpoint_uri:
            saved = self.checkpoint(body.source_checkpoint_uri).model_id
            entry = self._models.of_checkpoint(saved)
        else:
            entry = self._models.served(body.base_model)
        self._models.prepare(entry)  # built while the client loads its tokenizer
        bounds.check_rank(body.lora_rank)
        if not (body.train_mlp or body.train_attn or body.train_unembed):
            raise ApiError(
                400,
                "validation_failed",
                "LoRA trains nothing: set at least one of train_mlp, train_attn, train_unembed",
            )
        await self._models.tokenizer_ready(entry)
        self._liveness.admit()  # no await between the capacity check and the insert
        new = NewTrainingRun(
            model_id=entry.model_id,
            lora_rank=body.lora_rank,
            train_mlp=body.train_mlp,
            train_attn=body.train_attn,
            train_unembed=body.train_unembed,
            seed=body.seed,
            source_checkpoint_uri=body.source_checkpoint_uri or None,
            restore_optimizer=body.restore_optimizer,
        )
        row = self._store.create_training_run(session_cuid, new)
        self._liveness.touch(row.cuid)
        return row

    def start_from(self, row: TrainingRunRow, uri: str, *, restore_optimizer: bool) -> None:
        """The checkpoint the run's init_run loads (the SDK's load_state)."""
        self.checkpoint(uri)
        self._store.set_training_run_source(row.cuid, uri, restore_optimizer=restore_optimizer)

    def by_checkpoint(self, uri: str) -> tuple[CheckpointRow, TrainingRunRow]:
        found = self.checkpoint(uri)
        return found, self.get(found.run_cuid)

    def checkpoints(self, row: TrainingRunRow, limit: int, offset: int) -> Page[CheckpointRow]:
        return self._checkpoints.page(row.cuid, limit, offset)
