"""POST /actor/v1/events (submit) and GET /actor/v1/events/{event_id} (long-poll).

Submitting only queues the event on the scheduler and answers `accepted`; the SDK then polls
with `Prefer: wait=N`, and the poll returns as soon as the event completes.
"""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.responses import Response

from trio_local.errors import ApiError, not_found
from trio_local.http.common import service
from trio_local.protocol.events import EventRecord, decode_envelope, pack

MSGPACK = "application/msgpack"
MAX_WAIT_S = 55.0  # below the SDK's 65 s read timeout


def _msgpack(data: dict, status: int = 200) -> Response:
    return Response(pack(data), status_code=status, media_type=MSGPACK)


async def submit(request: Request) -> Response:
    state = service(request)
    envelope, payload = decode_envelope(await request.body())
    run_id = envelope.metadata.run_id
    if request.state.actor_run != run_id:
        raise ApiError(403, "forbidden", "the actor token was issued for another run")
    if state.store.training_run(run_id) is None:
        raise not_found("training run", run_id)
    existing = state.events.get(envelope.event_id)
    if existing is not None:
        raise ApiError(409, "event_exists", f"event {envelope.event_id} was already submitted")
    last = state.events.last_index.get(run_id)
    if last is not None and envelope.metadata.index <= last:
        raise ApiError(
            409,
            "event_out_of_order",
            f"event index {envelope.metadata.index} of run {run_id} is not after {last}",
        )
    state.liveness.touch(run_id)
    future = state.scheduler.submit(
        run_id, envelope.type.value, lambda: state.engine.handle_event(envelope, payload)
    )
    record = EventRecord(envelope=envelope, future=future)
    state.events.add(record)
    return _msgpack(record.response())


def _wait_seconds(request: Request) -> float:
    match = re.search(r"wait=(\d+(?:\.\d+)?)", request.headers.get("prefer", ""))
    return min(float(match.group(1)), MAX_WAIT_S) if match else 0.0


async def poll(request: Request) -> Response:
    event_id = request.path_params["event_id"]
    record = service(request).events.get(event_id)
    if record is None or record.envelope.metadata.run_id != request.state.actor_run:
        raise not_found("event", event_id)
    await record.wait(_wait_seconds(request))
    return _msgpack(record.response())
