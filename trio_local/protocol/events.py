"""Actor events: decoding submitted envelopes and tracking each event until it completes."""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import msgpack
from pydantic import ValidationError
from pytrio.protocol.actor.events.base import ProtocolPayload
from pytrio.protocol.actor.events.codec import payload_model_for_event
from pytrio.protocol.actor.events.event import EVENT_PROTOCOL_VERSION, EventEnvelope

from trio_local.errors import ApiError, EngineError

logger = logging.getLogger("trio_local")
MAX_RECORDS = 10_000


def describe(error: ValidationError) -> str:
    """A pydantic error as one line naming each bad field, without echoing its value."""
    parts = []
    for item in error.errors()[:5]:
        location = ".".join(str(part) for part in item["loc"]) or "body"
        parts.append(f"{location}: {item['msg']}")
    return "; ".join(parts)


def decode_envelope(body: bytes) -> tuple[EventEnvelope, ProtocolPayload]:
    """Unpack a msgpack envelope and validate it and its payload with the SDK's models."""
    try:
        raw = msgpack.unpackb(body, raw=False)
    except Exception as error:
        raise ApiError(400, "invalid_request_body", f"event body is not msgpack: {error}") from None
    if not isinstance(raw, dict):
        raise ApiError(400, "invalid_request_body", "event body must be a msgpack map")
    try:
        envelope = EventEnvelope.model_validate(raw)
        payload = payload_model_for_event(envelope.type).model_validate(envelope.payload)
    except ValidationError as error:
        raise ApiError(400, "invalid_request_body", f"malformed event: {describe(error)}") from None
    return envelope, payload


@dataclass(frozen=True)
class EventOutcome:
    """A trainer event's result and token usage, as its response carries them."""

    result: dict[str, Any]
    usage: dict[str, int]


@dataclass
class EventRecord:
    envelope: EventEnvelope
    future: Future[EventOutcome]

    @classmethod
    def refused(cls, envelope: EventEnvelope, refusal: ApiError) -> EventRecord:
        """An event accepted only to fail at once: its index is used, nothing ran."""
        future: Future[EventOutcome] = Future()
        future.set_exception(EngineError(refusal.code, refusal.message))
        return cls(envelope=envelope, future=future)

    def base(self) -> dict[str, Any]:
        return {
            "version": EVENT_PROTOCOL_VERSION,
            "event_id": self.envelope.event_id,
            "type": self.envelope.type.value,
        }

    def response(self) -> dict[str, Any]:
        if not self.future.done():
            return {**self.base(), "status": "accepted"}
        error = self.future.exception()
        if error is None:
            outcome = self.future.result()
            return {
                **self.base(),
                "status": "succeeded",
                "result": outcome.result,
                "usage": outcome.usage,
            }
        if isinstance(error, EngineError):
            code, message = error.code, error.message
        else:
            logger.error("event %s failed", self.envelope.event_id, exc_info=error)
            code, message = "internal_error", f"trio-local failed: {type(error).__name__}: {error}"
        usage = {"input_tokens": 0, "output_tokens": 0, "train_tokens": 0}
        return {
            **self.base(),
            "status": "failed",
            "error": {"code": code, "message": message},
            "usage": usage,
        }

    async def wait(self, seconds: float) -> None:
        if self.future.done() or seconds <= 0:
            return
        try:
            await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(self.future)), seconds)
        except (TimeoutError, Exception):  # the response reports the state either way
            return


class EventRegistry:
    """Accepted events by id (for polling and 409 dedupe), oldest completed ones trimmed."""

    def __init__(self) -> None:
        self._records: OrderedDict[str, EventRecord] = OrderedDict()
        self.last_index: dict[str, int] = {}

    def get(self, event_id: str) -> EventRecord | None:
        return self._records.get(event_id)

    def add(self, record: EventRecord) -> None:
        self._records[record.envelope.event_id] = record
        meta = record.envelope.metadata
        self.last_index[meta.run_id] = meta.index
        while len(self._records) > MAX_RECORDS:
            oldest_id, oldest = next(iter(self._records.items()))
            if not oldest.future.done():
                break
            del self._records[oldest_id]


def pack(data: dict[str, Any]) -> bytes:
    packed: bytes = msgpack.packb(data, use_bin_type=True)
    return packed
