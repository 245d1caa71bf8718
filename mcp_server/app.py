"""The state one server process shares across calls: config, budget, audit log, backend, runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

from pydantic import BaseModel, ConfigDict, Field

from mcp_server.audit import AuditLog
from mcp_server.backend import Backend, BackendManager
from mcp_server.budget import Budget
from mcp_server.config import Config
from mcp_server.ledger import Ledger, ledger_path
from mcp_server.rollouts import RolloutStore
from mcp_server.runs import RunRegistry


@dataclass
class AppState:
    config: Config
    budget: Budget
    audit: AuditLog
    backend: BackendManager
    runs: RunRegistry = field(default_factory=RunRegistry)
    # Completions `sample` returned, kept for `train_on_rewards` (bounded in count and time).
    rollouts: RolloutStore = field(default_factory=lambda: RolloutStore(4096, 3600.0))
    # What outlives the process: budget spent, checkpoint steps (shared with `budget`).
    ledger: Ledger = field(default_factory=lambda: Ledger(None))
    # Tool calls running now, and the signal that is stopping the server (None: serving).
    in_flight: int = 0
    stopped_by: int | None = None

    @property
    def stopping(self) -> bool:
        return self.stopped_by is not None

    @classmethod
    def from_config(cls, config: Config) -> AppState:
        """The ledger is read at first use; a ledger that cannot be read fails that use
        (`LedgerError`), never silently grants a fresh budget."""
        ledger = Ledger.deferred(lambda: ledger_path(config))
        return cls(
            config=config,
            budget=Budget.from_ledger(config.max_session_steps, config.max_session_tokens, ledger),
            audit=AuditLog(config.audit_log),
            backend=BackendManager(config),
            rollouts=RolloutStore(config.max_rollouts, config.rollout_ttl_s),
            runs=RunRegistry(ledger=ledger),
            ledger=ledger,
        )

    def close(self) -> None:
        self.ledger.flush()
        self.backend.close()


class ToolInput(BaseModel):
    """Base of every tool's input model: unknown arguments are refused, not ignored, and no
    number may be NaN or infinite (an infinite clip norm or learning rate silently means none)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class BackendResult(BaseModel):
    """Every result from the backend says which backend answered."""

    backend: str = Field(description="'local' (trio-local) or 'remote' (the PyTRIO service).")
    backend_note: str = Field(description="What that backend is; local is a tiny stand-in model.")


class BackendFields(TypedDict):
    """`BackendResult`'s fields, typed so that `**backend_fields(...)` is checked field by field."""

    backend: str
    backend_note: str


def backend_fields(backend: Backend) -> BackendFields:
    return {"backend": backend.kind, "backend_note": backend.note}
