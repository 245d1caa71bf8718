"""The database's rows as frozen dataclasses, one per table, read by column name.

A row is built from the columns its class names (`from_row`), so a column a later schema adds is
ignored by this code and a column it lacks fails loudly at read time, naming the field, rather
than surfacing later as a KeyError deep in a handler. Writes go through `values()`, a mapping of
column name to value for the store's named-column inserts.
"""

from __future__ import annotations

import sqlite3
from dataclasses import asdict, dataclass, fields
from typing import Any, Self


class _Row:
    @classmethod
    def from_row(cls, row: sqlite3.Row) -> Self:
        columns = set(row.keys())
        missing = [f.name for f in fields(cls) if f.name not in columns]  # type: ignore[arg-type]
        if missing:
            raise ValueError(f"{cls.__name__}: the database row has no column {missing}")
        return cls(**{f.name: row[f.name] for f in fields(cls)})  # type: ignore[arg-type]

    def values(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]


@dataclass(frozen=True)
class SessionRow(_Row):
    cuid: str
    status: str
    sdk_version: str | None
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class TrainingRunRow(_Row):
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
    status: str
    created_at: str
    started_at: str | None
    ended_at: str | None
    updated_at: str


@dataclass(frozen=True)
class SamplingRunRow(_Row):
    cuid: str
    session_cuid: str
    run_index: int
    model_id: str
    source_checkpoint_uri: str | None
    status: str
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class CheckpointRow(_Row):
    cuid: str
    run_cuid: str
    name: str
    kind: str
    uri: str
    path: str  # relative to the data directory
    step: int | None
    size_bytes: int
    lora_rank: int
    model_id: str
    created_at: str
    expires_at: str | None
