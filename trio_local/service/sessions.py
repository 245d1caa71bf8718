"""Service sessions: created by each SDK client, closed at its shutdown (ending its runs)."""

from __future__ import annotations

from pytrio.protocol.control.service_session.close import ServiceSessionCloseStatus

from trio_local.errors import not_found
from trio_local.liveness import Liveness
from trio_local.storage.db import Page, Store
from trio_local.storage.rows import SessionRow, SessionStatus


class Sessions:
    def __init__(self, store: Store, liveness: Liveness) -> None:
        self._store = store
        self._liveness = liveness

    def create(self, sdk_version: str) -> SessionRow:
        return self._store.create_session(sdk_version)

    def get(self, ident: str) -> SessionRow:
        row = self._store.session(ident)
        if row is None:
            raise not_found("service session", ident)
        return row

    def close(self, ident: str, status: ServiceSessionCloseStatus) -> SessionRow:
        row = self.get(ident)
        self._store.close_session(row.cuid, SessionStatus(status))
        self._liveness.end_session(row.cuid)  # the client is gone: free its slots
        return row

    def run_ids(self, row: SessionRow) -> tuple[list[str], list[str]]:
        """The session's training runs and sampling runs, oldest first."""
        return (
            self._store.session_run_ids(row.cuid, "training_runs"),
            self._store.session_run_ids(row.cuid, "sampling_runs"),
        )

    def page(self, limit: int, offset: int) -> Page[SessionRow]:
        return self._store.sessions(limit, offset)
