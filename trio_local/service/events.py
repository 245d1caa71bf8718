"""Trainer events: admitted to their run (ended runs, indexes, LoRA settings), queued on the
scheduler, and found again by the SDK's long-poll.

A refusal of an event's content (a value out of range, a length, a name, a rank) is that
event's failure, not an HTTP error: pytrio 0.2.9 marks its client broken for good after any
error at submit (`ActorTrainingRunCoordinator`), while a failed event costs the user only that
call. What the SDK cannot frame or must not retry stays an HTTP error: an unknown or ended run,
a duplicate id, a wrong index.
"""

from __future__ import annotations

from typing import Any

from pytrio.protocol.actor.events.base import ProtocolPayload
from pytrio.protocol.actor.events.event import EventEnvelope, EventType
from pytrio.protocol.actor.events.trainer.init_run import TrainerInitRunPayload

from trio_local.checks import Checker
from trio_local.engine.engine import Engine
from trio_local.errors import ApiError, not_found
from trio_local.liveness import Liveness
from trio_local.protocol.events import EventOutcome, EventRecord, EventRegistry
from trio_local.scheduler import Scheduler
from trio_local.storage.db import Store
from trio_local.storage.rows import TrainingRunRow, TrainingRunStatus


def _ended(run_id: str) -> ApiError:
    return ApiError(
        410,
        "training_run_ended",
        f"training run {run_id} has ended (its client went silent, its session closed or the "
        "service restarted); create a new training client, or resume from a checkpoint with "
        "create_training_client_from_state",
    )


def _lora_mismatch(row: TrainingRunRow, payload: TrainerInitRunPayload) -> ApiError | None:
    """init_run carries the LoRA settings the run was created with; nothing else is trained."""
    lora = payload.lora_config
    flags = ("train_mlp", "train_attn", "train_unembed")
    recorded = (row.lora_rank, *(bool(getattr(row, flag)) for flag in flags))
    if (lora.rank, *(getattr(lora, flag) for flag in flags)) == recorded:
        return None
    return ApiError(
        400,
        "lora_config_mismatch",
        f"payload.lora_config (rank {lora.rank}) differs from the settings training run "
        f"{row.cuid} was created with (rank {row.lora_rank}); create a new run",
    )


class TrainerEvents:
    def __init__(
        self,
        store: Store,
        liveness: Liveness,
        scheduler: Scheduler,
        engine: Engine,
        checks: Checker | None,
    ) -> None:
        self._store = store
        self._liveness = liveness
        self._scheduler = scheduler
        self._engine = engine
        self._checks = checks
        self._records = EventRegistry()

    def submit(
        self, envelope: EventEnvelope, payload: ProtocolPayload, refusal: ApiError | None
    ) -> dict[str, Any]:
        """Queue one event (its frame already checked), or accept it as failed with `refusal`
        or a refusal of its own; the answer is the event's response. Called on the event loop
        with no await inside, so no two submissions interleave."""
        run_id = envelope.metadata.run_id
        row = self._store.training_run(run_id)
        if row is None:
            raise not_found("training run", run_id)
        reopen = row.status == TrainingRunStatus.ENDED
        if reopen:
            self._check_reopenable(row, envelope.type)
        if self._records.get(envelope.event_id) is not None:
            raise ApiError(409, "event_exists", f"event {envelope.event_id} was already submitted")
        # The SDK numbers a run's events 1, 2, 3, ... and moves on only once one is accepted, so
        # the next index is known: a jump (say to 2**64-1) would otherwise block every later event.
        expected = self._records.last_index.get(run_id, 0) + 1
        if envelope.metadata.index != expected:
            raise ApiError(
                409,
                "event_out_of_order",
                f"metadata.index is {envelope.metadata.index}; run {run_id} expects {expected} "
                "next",
            )
        if refusal is None and isinstance(payload, TrainerInitRunPayload):
            refusal = _lora_mismatch(row, payload)
        if refusal is not None:
            if self._checks is not None:  # --check still reports the bad value it refused
                self._checks.refused_event(envelope, payload)
            # Accepted as failed: the SDK has moved its index past it, and so does the service.
            record = EventRecord.refused(envelope, refusal)
            self._records.add(record)
            self._liveness.touch(run_id)
            return record.response()
        if reopen and not self._store.reopen_training_run(run_id):
            raise _ended(run_id)
        self._liveness.touch(run_id)
        engine = self._engine

        def work() -> EventOutcome:
            return engine.handle_event(envelope, payload)

        scheduled = (
            work if self._checks is None else self._checks.trainer_work(envelope, payload, work)
        )
        future = self._scheduler.submit(run_id, envelope.type.value, scheduled)
        record = EventRecord(envelope=envelope, future=future)
        self._records.add(record)
        return record.response()

    def _check_reopenable(self, row: TrainingRunRow, kind: EventType) -> None:
        """An ended run takes no more events; one that never started may start late, but only
        through the capacity check every new run passes (it must not hold a slot past --max-runs).
        """
        if kind != EventType.TRAINER_INIT_RUN or row.started_at is not None:
            raise _ended(row.cuid)
        self._liveness.admit()  # the SDK's capacity 429: it retries until a slot frees

    def find(self, event_id: str, actor_run: str) -> EventRecord:
        """The event `actor_run`'s client polls for."""
        record = self._records.get(event_id)
        if record is not None and record.envelope.metadata.run_id == actor_run:
            return record
        # An event of an ended run (one in flight when the service restarted, whose record
        # died with the old process) answers that its run ended, not that it never existed.
        run = self._store.training_run(actor_run)
        if record is None and run is not None and run.status == TrainingRunStatus.ENDED:
            raise _ended(run.cuid)
        hint = ""
        if record is None and run is not None and run.cuid not in self._records.last_index:
            hint = " (none of this run's events reached this process: it restarted since?)"
        raise not_found("event", event_id, hint)
