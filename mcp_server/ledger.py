"""What outlives one server process: the budget spent and the step each checkpoint was saved at.

The session budget (`budget.py`) would otherwise reset whenever the server restarts, and a run
resumed from a checkpoint of an earlier server would restart its step count at 0. Both are kept
in one small JSON file beside the backend's data:

- local backend with a persistent data dir: `<data dir>/trio-mcp-ledger.json`, so the budget
  belongs to the runs and checkpoints it paid for;
- local backend with `local_data_dir = "temporary"`: in memory only (the data goes too);
- the PyTRIO service: `ledger-remote.json` beside the audit log (`$XDG_STATE_HOME/trio-mcp/`).

`ledger_file` in the configuration names another file, or `"memory"` for none. Every step's
spend is written as it is counted, so a server process killed in the middle of a call (SIGKILL,
OOM) loses none of it; the file is fsynced at the end of each call and at most every FLUSH_S
seconds while it runs (an fsync costs more than a small training step), which bounds what a
power loss can take. Every update is a read-modify-write under an exclusive `flock` on a sidecar
lock file, written to a new temporary file and renamed over the old one: two servers sharing the
file add up exactly, and a crash leaves the old or the new ledger, never half of one (a temporary
file a killed process left is removed by the next one). An unreadable ledger stops the server at
start with its path, rather than silently granting a fresh budget.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from localfs.atomic import write_atomic
from mcp_server.backend import choose_backend
from mcp_server.config import Config
from mcp_server.errors import BackendFailure, TrioMcpError
from mcp_server.local_data import persistent_dir

log = logging.getLogger("trio_mcp.ledger")

LOCAL_NAME = "trio-mcp-ledger.json"
REMOTE_NAME = "ledger-remote.json"
# During a call the ledger is fsynced at most this often; a call's end always fsyncs it, so a
# power loss can lose at most this much of the call it interrupts (a killed process: nothing).
FLUSH_S = 1.0
# Checkpoint steps kept at most (the oldest entries go first): the file stays small.
MAX_CHECKPOINTS = 10_000


class LedgerError(TrioMcpError):
    """The ledger file cannot be read or written; the message names the file."""


class LedgerData(BaseModel):
    version: int = 1
    steps_used: int = Field(0, ge=0)
    tokens_used: int = Field(0, ge=0)
    # checkpoint path -> the step of its run when it was saved
    checkpoint_steps: dict[str, int] = Field(default_factory=dict)


@dataclass
class Ledger:
    """The persistent record; `path` None keeps it in memory only.

    `deferred` resolves the path and reads the file at first use, so building a server imports
    neither the SDK nor trio-local and touches no file until a call needs the ledger.
    """

    path: Path | None
    data: LedgerData = field(default_factory=LedgerData)
    resolve: Callable[[], Path | None] | None = field(default=None, repr=False)
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)
    _loaded: bool = field(default=False, repr=False)
    _unsynced: bool = field(default=False, repr=False)  # written since the last fsync
    _synced: float = field(default=0.0, repr=False)  # time.monotonic() of the last fsync

    @classmethod
    def open(cls, path: Path | None) -> Ledger:
        ledger = cls(path)
        ledger.load()
        return ledger

    @classmethod
    def deferred(cls, resolve: Callable[[], Path | None]) -> Ledger:
        return cls(None, resolve=resolve)

    def load(self) -> LedgerData:
        """Resolve the path and read the file, once; the data (what was spent, steps)."""
        with self._lock:
            if self.resolve is not None:
                self.path, self.resolve = self.resolve(), None
            elif self._loaded:
                return self.data
            if self.path is not None:
                with self._locked():
                    self._remove_leftovers()
                    self.data = self._read()
            self._loaded = True
            return self.data

    @property
    def where(self) -> str:
        self.load()
        return str(self.path) if self.path is not None else "memory (this process only)"

    def add_spend(self, steps: int, tokens: int, *, flush: bool = False) -> None:
        """Record a spend at once (a killed process loses none of it); fsynced with `flush`,
        else at most every FLUSH_S seconds."""
        if not (steps or tokens):
            return
        with self._lock:
            due = flush or time.monotonic() - self._synced >= FLUSH_S
            self._update(lambda d: _spend(d, steps, tokens), sync=due)

    def flush(self) -> None:
        """Make what was written durable (fsync), if anything was not yet."""
        with self._lock:
            if not self._unsynced or self.path is None:
                return
            with self._locked():
                try:
                    fd = os.open(self.path, os.O_RDONLY)
                except OSError as exc:
                    raise LedgerError(f"cannot sync the ledger {self.path}: {exc}") from None
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
            self._unsynced = False
            self._synced = time.monotonic()

    def set_step(self, checkpoint: str, step: int) -> None:
        self._update(lambda d: _set_step(d, checkpoint, step))

    def drop(self, checkpoint: str) -> None:
        self._update(lambda d: d.checkpoint_steps.pop(checkpoint, None))

    def step_of(self, checkpoint: str) -> int | None:
        with self._lock:
            return self.load().checkpoint_steps.get(checkpoint)

    def _update(self, change: Callable[[LedgerData], object], *, sync: bool = True) -> None:
        self.load()
        with self._lock, self._locked():
            data = self._read() if self.path is not None else self.data
            change(data)
            if self.path is not None:
                self._write(data, sync=sync)
                self._unsynced = not sync
                if sync:
                    self._synced = time.monotonic()
            self.data = data

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        if self.path is None:
            yield
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(
                self.path.with_name(self.path.name + ".lock"),
                os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW,
                0o600,
            )
        except OSError as exc:
            raise LedgerError(f"cannot open the ledger's lock beside {self.path}: {exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _read(self) -> LedgerData:
        assert self.path is not None
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return LedgerData()
        except OSError as exc:
            raise LedgerError(f"cannot read the ledger {self.path}: {exc}") from None
        try:
            return LedgerData.model_validate(json.loads(text))
        except (ValueError, ValidationError):
            raise LedgerError(
                f"the ledger {self.path} is not valid JSON of trio-mcp's ledger; the budget "
                "spent cannot be read. Move it away to start from a fresh budget, or set "
                "ledger_file to another file"
            ) from None

    def _remove_leftovers(self) -> None:
        """Under the lock no other process is writing: every temporary file of ours is one a
        killed process left between writing and renaming it."""
        assert self.path is not None
        for leftover in self.path.parent.glob(f".{self.path.name}.*.tmp"):
            with contextlib.suppress(OSError):
                leftover.unlink()
                log.info("removed %s, left by a server killed while writing the ledger", leftover)

    def _write(self, data: LedgerData, *, sync: bool = True) -> None:
        assert self.path is not None
        try:
            write_atomic(
                self.path, data.model_dump_json().encode("utf-8"), suffix=".tmp", durable=sync
            )
        except OSError as exc:
            raise LedgerError(f"cannot write the ledger {self.path}: {exc}") from None


def _spend(data: LedgerData, steps: int, tokens: int) -> None:
    data.steps_used += steps
    data.tokens_used += tokens


def _set_step(data: LedgerData, checkpoint: str, step: int) -> None:
    data.checkpoint_steps.pop(checkpoint, None)
    data.checkpoint_steps[checkpoint] = step
    while len(data.checkpoint_steps) > MAX_CHECKPOINTS:
        data.checkpoint_steps.pop(next(iter(data.checkpoint_steps)))


def ledger_path(config: Config) -> Path | None:
    """Where this configuration's ledger lives (None: in memory), per the module docstring."""
    if config.ledger_file == "memory":
        return None
    if isinstance(config.ledger_file, Path):
        return config.ledger_file
    try:
        kind = choose_backend(config)
    except BackendFailure:
        return None  # the server cannot train at all; its first call says why
    if kind == "remote":
        return config.audit_log.parent / REMOTE_NAME
    if config.local_data_dir == "temporary":
        return None
    return persistent_dir(config.local_data_dir) / LOCAL_NAME
