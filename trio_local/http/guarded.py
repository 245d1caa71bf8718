"""uvicorn's h11 protocol with two deadlines that uvicorn itself does not keep.

- A connection must deliver a request's headers within `header_timeout` seconds of opening
  (or of its previous response): a client that sends them one byte at a time would otherwise
  hold a connection open for as long as it likes.
- A response whose writes stall (the peer stops reading, so the transport's buffer stays
  above its high-water mark) for `write_stall_timeout` seconds is aborted: the connection is
  reset instead of waiting for a reader who never comes.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_TIMEOUT_S = 15.0
WRITE_STALL_TIMEOUT_S = 60.0


class GuardedH11Protocol(H11Protocol):
    header_timeout: float = HEADER_TIMEOUT_S
    write_stall_timeout: float = WRITE_STALL_TIMEOUT_S

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None
        self._stall_timer: asyncio.TimerHandle | None = None

    # uvicorn's H11Protocol narrows it to the Transport a stream gets (asyncio: BaseTransport)
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # as uvicorn's
        super().connection_made(transport)
        self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_timers()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        super().handle_events()
        if self.cycle is not None and not self.cycle.response_complete:
            self._cancel(self._header_timer)  # the headers are in: the request runs
            self._header_timer = None

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_header_timer()  # the next request on this connection has as long

    def pause_writing(self) -> None:
        super().pause_writing()
        self._cancel(self._stall_timer)
        self._stall_timer = self.loop.call_later(self.write_stall_timeout, self._abort)

    def resume_writing(self) -> None:
        super().resume_writing()
        self._cancel(self._stall_timer)
        self._stall_timer = None

    def _arm_header_timer(self) -> None:
        self._cancel(self._header_timer)
        self._header_timer = self.loop.call_later(self.header_timeout, self._abort)

    def _abort(self) -> None:
        self._cancel_timers()
        if not self.transport.is_closing() or self.transport.get_write_buffer_size():
            self.transport.abort()  # close() would wait for the stalled buffer to drain

    def _cancel_timers(self) -> None:
        self._cancel(self._header_timer)
        self._cancel(self._stall_timer)
        self._header_timer = self._stall_timer = None

    @staticmethod
    def _cancel(timer: asyncio.TimerHandle | None) -> None:
        if timer is not None:
            timer.cancel()
