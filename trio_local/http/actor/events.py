"""POST /actor/v1/events (submit) and GET /actor/v1/events/{event_id} (long-poll).

Submitting only queues the event on the scheduler and answers `accepted`; the SDK then polls
with `Prefer: wait=N`, and the poll returns as soon as the event completes.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from pytrio.protocol.actor.events.event import EventEnvelope, EventType
from pytrio.protocol.actor.events.trainer.init_run import TrainerInitRunPayload
from starlette.requests import Request
from starlette.responses import Response

from trio_local.errors import ApiError, not_found
from trio_local.http.common import service
from trio_local.protocol import bounds
from trio_local.protocol.events import EventRecord, decode_envelope, pack
from trio_local.service import Service
from trio_local.storage.rows import TrainingRunRow, TrainingRunStatus

MSGPACK = "application/msgpack"
MAX_WAIT_S = 55.0  # below the SDK's 65 s read timeout


def _msgpack(data: dict, status: int = 200) -> Response:
    return Response(pack(data), status_code=status, media_type=MSGPACK)


async def submit(request: Request) -> Response:
    """Queue one event. What the SDK cannot frame or must not retry is an HTTP error: a
    malformed envelope, another run's token, an unknown or ended run, a wrong index. A refusal
    of the event's content (a value out of range, a length, a name, a rank) is that event's
    failure instead: pytrio 0.2.9 marks its client broken for good after any error at submit
    (`ActorTrainingRunCoordinator`), while a failed event costs the user only that call.
    """
    state = service(request)
    # Parsing and range checks run off the event loop (an event may carry 64 MiB); every
    # check of shared state below runs on it with no await in between, so none interleave.
    envelope, payload, refusal = await asyncio.to_thread(_decode_and_check, await request.body())
    run_id = envelope.metadata.run_id
    if request.state.actor_run != run_id:
        raise ApiError(403, "forbidden", "the actor token was issued for another run")
    bounds.check_envelope(envelope)
    row = state.store.training_run(run_id)
    if row is None:
        raise not_found("training run", run_id)
    reopen = row.status == TrainingRunStatus.ENDED
    if reopen:
        _check_reopenable(state, row, envelope.type)
    existing = state.events.get(envelope.event_id)
    if existing is not None:
        raise ApiError(409, "event_exists", f"event {envelope.event_id} was already submitted")
    # The SDK numbers a run's events 1, 2, 3, ... and moves on only once one is accepted, so
    # the next index is known: a jump (say to 2**64-1) would otherwise block every later event.
    expected = state.events.last_index.get(run_id, 0) + 1
    if envelope.metadata.index != expected:
        raise ApiError(
            409,
            "event_out_of_order",
            f"metadata.index is {envelope.metadata.index}; run {run_id} expects {expected} next",
        )
    if refusal is None and isinstance(payload, TrainerInitRunPayload):
        refusal = _lora_mismatch(row, payload)
    if refusal is not None:
        if state.checks is not None:  # --check still reports the bad value it refused
            state.checks.refused_event(envelope, payload)
        # Accepted as failed: the SDK has moved its index past it, and so does the service.
        record = EventRecord.refused(envelope, refusal)
        state.events.add(record)
        state.liveness.touch(run_id)
        return _msgpack(record.response())
    if reopen and not state.store.reopen_training_run(run_id):
        raise _ended(run_id)
    state.liveness.touch(run_id)
    work = lambda: state.engine.handle_event(envelope, payload)  # noqa: E731
    if state.checks is not None:
        work = state.checks.trainer_work(envelope, payload, work)
    future = state.scheduler.submit(run_id, envelope.type.value, work)
    record = EventRecord(envelope=envelope, future=future)
    state.events.add(record)
    return _msgpack(record.response())


def _decode_and_check(body: bytes) -> tuple[EventEnvelope, Any, ApiError | None]:
    """The parsed event and, when its content is out of range, the refusal to fail it with."""
    envelope, payload = decode_envelope(body)
    try:
        bounds.check_payload(envelope, payload)
    except ApiError as refusal:
        return envelope, payload, refusal
    return envelope, payload, None


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


def _ended(run_id: str) -> ApiError:
    return ApiError(
        410,
        "training_run_ended",
        f"training run {run_id} has ended (its client went silent, its session closed or the "
        "service restarted); create a new training client, or resume from a checkpoint with "
        "create_training_client_from_state",
    )


def _check_reopenable(state: Service, row: TrainingRunRow, kind: EventType) -> None:
    """An ended run takes no more events; one that never started may start late, but only
    through the capacity check every new run passes (it must not hold a slot past --max-runs).
    """
    if kind != EventType.TRAINER_INIT_RUN or row.started_at is not None:
        raise _ended(row.cuid)
    state.liveness.admit()  # the SDK's capacity 429: it retries until a slot frees


def _wait_seconds(request: Request) -> float:
    match = re.search(r"wait=(\d+(?:\.\d+)?)", request.headers.get("prefer", ""))
    return min(float(match.group(1)), MAX_WAIT_S) if match else 0.0


async def poll(request: Request) -> Response:
    event_id = request.path_params["event_id"]
    state = service(request)
    record = state.events.get(event_id)
    if record is None or record.envelope.metadata.run_id != request.state.actor_run:
        # An event of an ended run (one in flight when the service restarted, whose record
        # died with the old process) answers that its run ended, not that it never existed.
        run = state.store.training_run(request.state.actor_run)
        if record is None and run is not None and run.status == TrainingRunStatus.ENDED:
            raise _ended(run.cuid)
        hint = ""
        if record is None and run is not None and run.cuid not in state.events.last_index:
            hint = " (none of this run's events reached this process: it restarted since?)"
        raise not_found("event", event_id, hint)
    await record.wait(_wait_seconds(request))
    return _msgpack(record.response())
