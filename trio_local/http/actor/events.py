"""POST /actor/v1/events (submit) and GET /actor/v1/events/{event_id} (long-poll).

Submitting only queues the event on the scheduler and answers `accepted`; the SDK then polls
with `Prefer: wait=N`, and the poll returns as soon as the event completes. What is admitted
and how is the service's (`service/events.py`); here the body is parsed and the token checked.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from pytrio.protocol.actor.events.base import ProtocolPayload
from pytrio.protocol.actor.events.event import EventEnvelope
from starlette.requests import Request
from starlette.responses import Response

from trio_local.errors import ApiError
from trio_local.http.common import service
from trio_local.protocol import bounds
from trio_local.protocol.events import decode_envelope, pack

MSGPACK = "application/msgpack"
MAX_WAIT_S = 55.0  # below the SDK's 65 s read timeout


def _msgpack(data: dict[str, Any], status: int = 200) -> Response:
    return Response(pack(data), status_code=status, media_type=MSGPACK)


async def submit(request: Request) -> Response:
    """Queue one event. A malformed envelope or another run's token is an HTTP error; a refusal
    of the event's content is that event's failure (see service/events.py)."""
    # Parsing and range checks run off the event loop (an event may carry 64 MiB); every
    # check of shared state runs on it with no await in between, so none interleave.
    envelope, payload, refusal = await asyncio.to_thread(_decode_and_check, await request.body())
    if request.state.actor_run != envelope.metadata.run_id:
        raise ApiError(403, "forbidden", "the actor token was issued for another run")
    bounds.check_envelope(envelope)
    return _msgpack(service(request).trainer_events.submit(envelope, payload, refusal))


def _decode_and_check(body: bytes) -> tuple[EventEnvelope, ProtocolPayload, ApiError | None]:
    """The parsed event and, when its content is out of range, the refusal to fail it with."""
    envelope, payload = decode_envelope(body)
    try:
        bounds.check_payload(envelope, payload)
    except ApiError as refusal:
        return envelope, payload, refusal
    return envelope, payload, None


def _wait_seconds(request: Request) -> float:
    match = re.search(r"wait=(\d+(?:\.\d+)?)", request.headers.get("prefer", ""))
    return min(float(match.group(1)), MAX_WAIT_S) if match else 0.0


async def poll(request: Request) -> Response:
    record = service(request).trainer_events.find(
        request.path_params["event_id"], request.state.actor_run
    )
    await record.wait(_wait_seconds(request))
    return _msgpack(record.response())
