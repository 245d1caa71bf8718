"""The database's rows as frozen dataclasses, one per table, read by column name.

A row is built from the columns its class names (`from_row`), so a column a later schema adds is
ignored by this code and a column it lacks fails loudly at read time, naming the field, rather
than surfacing later as a KeyError deep in a handler. Writes go through `values()`, a mapping of
column name to plain SQLite value for the store's named-column inserts, and new rows are built
from the typed requests below (`NewTrainingRun`), never from a loose dict.

Statuses and kinds are `StrEnum`s whose values are the strings stored in SQLite and sent on the
wire since the first release: a data directory written before they were enums reads the same.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import ClassVar, Self, get_type_hints

# What SQLite stores and returns for the columns of these tables.
SqlValue = str | int | float | bytes | None


class SessionStatus(StrEnum):
    ACTIVE = "ACTIVE"
    ENDED = "ENDED"  # closed by the SDK at client shutdown
    CANCELLED = "CANCELLED"


class TrainingRunStatus(StrEnum):
    CREATED = "CREATED"  # created, no init_run event trained yet
    RUNNING = "RUNNING"  # its adapter lives in this process
    ENDED = "ENDED"  # client gone, session closed or service restarted


ACTIVE_TRAINING_RUN = (TrainingRunStatus.CREATED, TrainingRunStatus.RUNNING)


class SamplingRunStatus(StrEnum):
    READY = "READY"


class CheckpointKind(StrEnum):
    TRAINING = "TRAINING"  # save_state: adapter and optimizer state
    SAMPLER = "SAMPLER"  # save_weights_for_sampler: the adapter only


_ENUM_COLUMNS: dict[type, dict[str, type[StrEnum]]] = {}


def _enum_columns(cls: type) -> dict[str, type[StrEnum]]:
    """The columns of `cls` read into a StrEnum (from the stored string), found once."""
    found = _ENUM_COLUMNS.get(cls)
    if found is None:
        hints = get_type_hints(cls)
        found = {
            name: hint
            for name, hint in hints.items()
            if isinstance(hint, type) and issubclass(hint, StrEnum)
        }
        _ENUM_COLUMNS[cls] = found
    return found


@dataclass(frozen=True)
class _Row:
    TABLE: ClassVar[str]

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> Self:
        columns = set(row.keys())
        names = [f.name for f in fields(cls)]
        missing = [name for name in names if name not in columns]
        if missing:
            raise ValueError(f"{cls.__name__}: the database row has no column {missing}")
        enums = _enum_columns(cls)
        values = {name: enums[name](row[name]) if name in enums else row[name] for name in names}
        return cls(**values)

    def values(self) -> dict[str, SqlValue]:
        """Column name -> SQLite value (an enum as its stored string)."""
        return {
            f.name: str(value) if isinstance(value := getattr(self, f.name), StrEnum) else value
            for f in fields(self)
        }


@dataclass(frozen=True)
class SessionRow(_Row):
    TABLE: ClassVar[str] = "sessions"
    cuid: str
    status: SessionStatus
    sdk_version: str | None
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class TrainingRunRow(_Row):
    TABLE: ClassVar[str] = "training_runs"
    cuid: str
    session_cuid: str
    run_index: int
    model_id: str
    lora_rank: int
    seed: int | None
    train_mlp: int
    train_attn: int
    train_unembed: int
    source_checkpoint_uri: str | None
    restore_optimizer: int
    status: TrainingRunStatus
    created_at: str
    started_at: str | None
    ended_at: str | None
    updated_at: str


@dataclass(frozen=True)
class SamplingRunRow(_Row):
    TABLE: ClassVar[str] = "sampling_runs"
    cuid: str
    session_cuid: str
    run_index: int
    model_id: str
    source_checkpoint_uri: str | None
    status: SamplingRunStatus
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class CheckpointRow(_Row):
    TABLE: ClassVar[str] = "checkpoints"
    cuid: str
    run_cuid: str
    name: str
    kind: CheckpointKind
    uri: str
    path: str  # relative to the data directory
    step: int | None
    size_bytes: int
    lora_rank: int
    model_id: str
    created_at: str
    expires_at: str | None


@dataclass(frozen=True)
class NewTrainingRun:
    """What creating a training run records (the SDK's create request, its model resolved)."""

    model_id: str
    lora_rank: int
    train_mlp: bool
    train_attn: bool
    train_unembed: bool
    seed: int | None = None
    source_checkpoint_uri: str | None = None
    restore_optimizer: bool = False
