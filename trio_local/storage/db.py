"""SQLite metadata: service sessions, training runs, sampling runs and checkpoints.

One connection guarded by a lock: the HTTP loop and the scheduler's worker thread both write,
and the volume is tiny, so serialising is simpler than a pool and never contends in practice.
Every change of more than one statement runs in one transaction (`transaction()`), so a process
killed half-way leaves the database as it was before the change.

Checkpoint rows store their directory relative to the data directory, so a data directory that
is moved or copied keeps working and a copy never points into the original.
"""

from __future__ import annotations

import contextlib
import secrets
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Generic, Literal, TypeVar

from trio_local.config import ConfigError
from trio_local.storage.rows import (
    ACTIVE_TRAINING_RUN,
    CheckpointRow,
    NewTrainingRun,
    SamplingRunRow,
    SamplingRunStatus,
    SessionRow,
    SessionStatus,
    SqlValue,
    TrainingRunRow,
    TrainingRunStatus,
)

R = TypeVar("R", SessionRow, TrainingRunRow, SamplingRunRow, CheckpointRow)
RunTable = Literal["training_runs", "sampling_runs"]
StampColumn = Literal["started_at", "ended_at"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    cuid TEXT PRIMARY KEY, status TEXT NOT NULL, sdk_version TEXT,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS training_runs (
    cuid TEXT PRIMARY KEY, session_cuid TEXT NOT NULL, run_index INTEGER NOT NULL,
    model_id TEXT NOT NULL, lora_rank INTEGER NOT NULL, seed INTEGER,
    train_mlp INTEGER NOT NULL, train_attn INTEGER NOT NULL, train_unembed INTEGER NOT NULL,
    source_checkpoint_uri TEXT, restore_optimizer INTEGER NOT NULL, status TEXT NOT NULL,
    created_at TEXT NOT NULL, started_at TEXT, ended_at TEXT, updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sampling_runs (
    cuid TEXT PRIMARY KEY, session_cuid TEXT NOT NULL, run_index INTEGER NOT NULL,
    model_id TEXT NOT NULL, source_checkpoint_uri TEXT, status TEXT NOT NULL,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS checkpoints (
    cuid TEXT PRIMARY KEY, run_cuid TEXT NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL,
    uri TEXT NOT NULL UNIQUE, path TEXT NOT NULL, step INTEGER, size_bytes INTEGER NOT NULL,
    lora_rank INTEGER NOT NULL, model_id TEXT NOT NULL, created_at TEXT NOT NULL,
    expires_at TEXT
);
"""


# PRAGMA user_version: 0 is a data directory from before versioning (or a new one), whose
# tables the first step creates if they are missing. MIGRATIONS[v] takes version v to v + 1.
SCHEMA_VERSION = 1
MIGRATIONS: dict[int, tuple[str, ...]] = {
    0: tuple(part.strip() for part in SCHEMA.split(";") if part.strip()),
}


class DataDirTooNew(ConfigError):
    """The database was written by a newer trio-local whose schema this one cannot read."""


def now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    return moment.isoformat()


def new_cuid(prefix: str) -> str:
    # Telemetry and the SDK accept ids made of [A-Za-z0-9_-]; keep them that way.
    return f"{prefix}_{secrets.token_hex(8)}"


@dataclass(frozen=True)
class Page(Generic[R]):
    rows: list[R]
    total: int


class Store:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._conn.row_factory = sqlite3.Row
        # Re-entrant: a transaction holds it while its statements take it again.
        self._lock = threading.RLock()
        with self._lock:
            self._check_version(path)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=FULL")
            self._migrate()

    def _version(self) -> int:
        return int(self._conn.execute("PRAGMA user_version").fetchone()[0])

    def _check_version(self, path: Path) -> None:
        """Refuse, before writing anything, a database a newer trio-local has written."""
        found = self._version()
        if found > SCHEMA_VERSION:
            self._conn.close()
            raise DataDirTooNew(
                f"the data directory {path.parent} was written by a newer trio-local (database "
                f"schema {found}; this one reads up to {SCHEMA_VERSION}): upgrade pytrio-skill, "
                "or pass another --data-dir"
            )

    def _migrate(self) -> None:
        """Bring the database to SCHEMA_VERSION, one step per transaction with its version."""
        while (version := self._version()) < SCHEMA_VERSION:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in MIGRATIONS[version]:
                    self._conn.execute(statement)
                # PRAGMA takes no parameters; the number is this module's constant.
                self._conn.execute(f"PRAGMA user_version = {version + 1}")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Run the block's statements as one SQLite transaction (all or none of them)."""
        with self._lock:
            if self._conn.in_transaction:  # nested: the outer block commits
                yield
                return
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def _one(self, kind: type[R], sql: str, args: tuple[SqlValue, ...] = ()) -> R | None:
        with self._lock:
            row = self._conn.execute(sql, args).fetchone()
        return kind.from_row(row) if row else None

    def _all(self, kind: type[R], sql: str, args: tuple[SqlValue, ...] = ()) -> list[R]:
        with self._lock:
            return [kind.from_row(row) for row in self._conn.execute(sql, args).fetchall()]

    def _count(self, sql: str, args: tuple[SqlValue, ...] = ()) -> int:
        with self._lock:
            return int(self._conn.execute(sql, args).fetchone()[0])

    def _insert(self, row: SessionRow | TrainingRunRow | SamplingRunRow | CheckpointRow) -> None:
        """One row, by column name: a column added later cannot shift the others."""
        values = row.values()
        columns = ", ".join(values)  # the row class's field names, never from a request
        marks = ", ".join(f":{name}" for name in values)
        self._exec(f"INSERT INTO {row.TABLE} ({columns}) VALUES ({marks})", values)

    def _exec(self, sql: str, args: tuple[SqlValue, ...] | dict[str, SqlValue] = ()) -> int:
        with self._lock:
            return self._conn.execute(sql, args).rowcount

    def _page(
        self,
        kind: type[R],
        table: str,
        limit: int,
        offset: int,
        *,
        where: str = "",
        args: tuple[SqlValue, ...] = (),
    ) -> Page[R]:
        total = self._count(f"SELECT COUNT(*) FROM {table} {where}", args)
        rows = self._all(
            kind,
            f"SELECT * FROM {table} {where} ORDER BY created_at, cuid LIMIT ? OFFSET ?",
            (*args, limit, offset),
        )
        return Page(rows=rows, total=total)

    @staticmethod
    def _created(row: R | None, cuid: str) -> R:
        """The row just written, read back; it cannot be missing inside our own transaction."""
        if row is None:
            raise RuntimeError(f"row {cuid} was written but cannot be read back")
        return row

    # sessions
    def create_session(self, sdk_version: str) -> SessionRow:
        stamp = iso(now())
        cuid = new_cuid("ss")
        self._insert(
            SessionRow(
                cuid=cuid,
                status=SessionStatus.ACTIVE,
                sdk_version=sdk_version,
                created_at=stamp,
                updated_at=stamp,
            )
        )
        return self._created(self.session(cuid), cuid)

    def session(self, cuid: str) -> SessionRow | None:
        return self._one(SessionRow, "SELECT * FROM sessions WHERE cuid = ?", (cuid,))

    def sessions(self, limit: int, offset: int) -> Page[SessionRow]:
        return self._page(SessionRow, "sessions", limit, offset)

    def close_session(self, cuid: str, status: SessionStatus) -> None:
        self._exec(
            "UPDATE sessions SET status = ?, updated_at = ? WHERE cuid = ?",
            (str(status), iso(now()), cuid),
        )

    def session_run_ids(self, cuid: str, table: RunTable) -> list[str]:
        with self._lock:
            rows = self._conn.execute(
                f"SELECT cuid FROM {table} WHERE session_cuid = ? ORDER BY created_at", (cuid,)
            ).fetchall()
        return [row[0] for row in rows]

    # training runs
    def create_training_run(self, session_cuid: str, new: NewTrainingRun) -> TrainingRunRow:
        stamp = iso(now())
        cuid = new_cuid("tr")
        with self.transaction():  # run_index counts the session's runs: no one may slip in
            index = len(self.session_run_ids(session_cuid, "training_runs")) + 1
            self._insert(
                TrainingRunRow(
                    cuid=cuid,
                    session_cuid=session_cuid,
                    run_index=index,
                    model_id=new.model_id,
                    lora_rank=new.lora_rank,
                    seed=new.seed,
                    train_mlp=int(new.train_mlp),
                    train_attn=int(new.train_attn),
                    train_unembed=int(new.train_unembed),
                    source_checkpoint_uri=new.source_checkpoint_uri or None,
                    restore_optimizer=int(new.restore_optimizer),
                    status=TrainingRunStatus.CREATED,
                    created_at=stamp,
                    started_at=None,
                    ended_at=None,
                    updated_at=stamp,
                )
            )
        return self._created(self.training_run(cuid), cuid)

    def training_run(self, cuid: str) -> TrainingRunRow | None:
        return self._one(TrainingRunRow, "SELECT * FROM training_runs WHERE cuid = ?", (cuid,))

    def training_runs(self, limit: int, offset: int) -> Page[TrainingRunRow]:
        return self._page(TrainingRunRow, "training_runs", limit, offset)

    def set_training_run_source(
        self, cuid: str, source_checkpoint_uri: str, *, restore_optimizer: bool
    ) -> None:
        """The checkpoint a run starts from (the SDK's load_state before init_run)."""
        self._exec(
            "UPDATE training_runs SET source_checkpoint_uri = ?, restore_optimizer = ?,"
            " updated_at = ? WHERE cuid = ?",
            (source_checkpoint_uri, int(restore_optimizer), iso(now()), cuid),
        )

    def move_training_run(
        self, cuid: str, to: TrainingRunStatus, *, stamp_column: StampColumn
    ) -> bool:
        """Move an active (CREATED or RUNNING) run to `to`; False when it already ended.

        One conditional statement, so an ended run is never revived by a late event.
        """
        stamp = iso(now())
        active = ", ".join(f"'{status}'" for status in ACTIVE_TRAINING_RUN)
        changed = self._exec(
            f"UPDATE training_runs SET status = ?, {stamp_column} = ?, updated_at = ?"
            f" WHERE cuid = ? AND status IN ({active})",
            (str(to), stamp, stamp, cuid),
        )
        return changed > 0

    def reopen_training_run(self, cuid: str) -> bool:
        """ENDED -> CREATED for a run that never started (its client was only slow to send
        its first event); a run that trained once has lost its weights and stays ended."""
        changed = self._exec(
            "UPDATE training_runs SET status = ?, ended_at = NULL, updated_at = ?"
            " WHERE cuid = ? AND status = ? AND started_at IS NULL",
            (str(TrainingRunStatus.CREATED), iso(now()), cuid, str(TrainingRunStatus.ENDED)),
        )
        return changed > 0

    # sampling runs
    def create_sampling_run(
        self, session_cuid: str, model_id: str, source_checkpoint_uri: str | None
    ) -> SamplingRunRow:
        stamp = iso(now())
        cuid = new_cuid("sr")
        with self.transaction():
            index = len(self.session_run_ids(session_cuid, "sampling_runs")) + 1
            self._insert(
                SamplingRunRow(
                    cuid=cuid,
                    session_cuid=session_cuid,
                    run_index=index,
                    model_id=model_id,
                    source_checkpoint_uri=source_checkpoint_uri or None,
                    status=SamplingRunStatus.READY,
                    created_at=stamp,
                    updated_at=stamp,
                )
            )
        return self._created(self.sampling_run(cuid), cuid)

    def sampling_run(self, cuid: str) -> SamplingRunRow | None:
        return self._one(SamplingRunRow, "SELECT * FROM sampling_runs WHERE cuid = ?", (cuid,))

    # checkpoints
    def add_checkpoint(self, row: CheckpointRow) -> CheckpointRow:
        if Path(row.path).is_absolute() or ".." in Path(row.path).parts:
            raise ValueError(f"checkpoint paths are relative to the data directory: {row.path}")
        # A re-save under the same name (overwrite=True) replaces the old row; both statements
        # commit together or not at all, so an interrupted overwrite keeps the old row.
        with self.transaction():
            self._exec("DELETE FROM checkpoints WHERE uri = ?", (row.uri,))
            self._insert(row)
            return self._created(self.checkpoint(row.cuid), row.cuid)

    def checkpoint(self, cuid: str) -> CheckpointRow | None:
        return self._one(CheckpointRow, "SELECT * FROM checkpoints WHERE cuid = ?", (cuid,))

    def checkpoint_by_uri(self, uri: str) -> CheckpointRow | None:
        return self._one(CheckpointRow, "SELECT * FROM checkpoints WHERE uri = ?", (uri,))

    def checkpoints(self, run_cuid: str | None, limit: int, offset: int) -> Page[CheckpointRow]:
        if run_cuid is None:
            return self._page(CheckpointRow, "checkpoints", limit, offset)
        where, args = "WHERE run_cuid = ?", (run_cuid,)
        return self._page(CheckpointRow, "checkpoints", limit, offset, where=where, args=args)

    def all_checkpoints(self) -> list[CheckpointRow]:
        return self._all(CheckpointRow, "SELECT * FROM checkpoints")

    def set_checkpoint_path(self, cuid: str, path: str) -> None:
        self._exec("UPDATE checkpoints SET path = ? WHERE cuid = ?", (path, cuid))

    def delete_checkpoint(self, cuid: str) -> bool:
        return self._exec("DELETE FROM checkpoints WHERE cuid = ?", (cuid,)) > 0
