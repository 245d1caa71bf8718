"""Fault injection: a process killed before each step of save, overwrite and delete.

A forked child runs the real storage code with every step counted: each rename, file write,
fsync, tree removal and SQL statement. The child kills itself (`os._exit`, no cleanup, no
rollback) just before step k, for every k; start-up recovery then runs in a fresh process state
and the checkpoint must be whole: the old one or the new one, listed and complete, or (for a
new save or a delete) absent from both the files and SQLite. Another checkpoint beside it must
never be touched.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from trio_local.storage import checkpoints as ckpt
from trio_local.storage.db import Store, iso, now
from trio_local.storage.recovery import recover_checkpoints
from trio_local.storage.rows import CheckpointRow

torch = pytest.importorskip("torch")

KILLED = 137
DB = "trio-local.sqlite3"


def _data(marker: float) -> ckpt.CheckpointData:
    return ckpt.CheckpointData(
        adapter={"w": torch.full((4, 4), marker)},
        adapter_config={"marker": marker},
        optimizer={"0.exp_avg": torch.zeros(4)},
        trainer_state={"optim_steps": int(marker), "param_groups": []},
    )


def _row(name: str, cuid: str) -> CheckpointRow:
    return CheckpointRow(
        cuid=cuid,
        run_cuid="tr_kill",
        name=name,
        kind="TRAINING",
        uri=f"trio://tr_kill/weights/{name}",
        path=f"checkpoints/tr_kill/weights/{name}",
        step=0,
        size_bytes=0,
        lora_rank=4,
        model_id="Qwen/Qwen3-4B-Instruct-2507",
        created_at=iso(now()),
        expires_at=None,
    )


class Steps:
    """Counts every durable step; before step `kill_at` the process dies on the spot."""

    def __init__(self, kill_at: int | None) -> None:
        self.kill_at = kill_at
        self.count = 0

    def step(self) -> None:
        self.count += 1
        if self.count == self.kill_at:
            os._exit(KILLED)

    def wrap(self, owner: object, name: str) -> None:
        original = getattr(owner, name)

        def counted(*args, **kwargs):
            self.step()
            return original(*args, **kwargs)

        setattr(owner, name, counted)


def _instrument(steps: Steps, store: Store) -> None:
    steps.wrap(Path, "rename")
    steps.wrap(Path, "replace")
    steps.wrap(Path, "write_bytes")
    steps.wrap(Path, "write_text")
    steps.wrap(os, "fsync")
    steps.wrap(shutil, "rmtree")
    # Called as each statement starts: a kill here falls between two statements.
    connection: sqlite3.Connection = store._conn
    connection.set_trace_callback(lambda _sql: steps.step())


Action = Callable[[Store, Path], None]


def _run_in_child(data_dir: Path, action: Action, kill_at: int | None) -> int:
    """Run `action` in a forked child; return its exit status, or the step count if it ends."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        os.close(read)
        try:
            store = Store(data_dir / DB)
            steps = Steps(kill_at)
            _instrument(steps, store)
            action(store, data_dir)
            count = steps.count
            store.close()
            os.write(write, str(count).encode())
            os._exit(0)
        except BaseException:
            os._exit(1)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    reported = os.read(read, 64).decode()
    os.close(read)
    code = os.waitstatus_to_exitcode(status)
    assert code in (0, KILLED), f"the child failed with {code} (kill_at={kill_at})"
    return int(reported) if code == 0 else -1


def _state(data_dir: Path, name: str) -> tuple[dict | None, float | None]:
    """After recovery: the row of `name` and the marker of its files (None when absent)."""
    store = Store(data_dir / DB)
    recover_checkpoints(store, data_dir)
    row = store.checkpoint_by_uri(f"trio://tr_kill/weights/{name}")
    store.close()
    target = data_dir / ckpt.relative_dir("tr_kill", "TRAINING", name)
    files = ckpt.read_config(target, data_dir)["marker"] if target.exists() else None
    return row, files


def _prepare(data_dir: Path, *names: str) -> None:
    store = Store(data_dir / DB)
    for index, name in enumerate(names):
        ckpt.save_checkpoint(
            store, data_dir, _row(name, f"ck_{index}"), _data(1.0), overwrite=False
        )
    store.close()


def _assert_neighbour_intact(data_dir: Path) -> None:
    row, marker = _state(data_dir, "neighbour")
    assert row is not None and marker == 1.0
    assert not (data_dir / "quarantine").exists() or not any(
        "neighbour" in str(p) for p in (data_dir / "quarantine").rglob("*")
    )


def _kill_everywhere(tmp_path: Path, setup: tuple[str, ...], action: Action) -> list[Path]:
    """One directory per kill point (plus one run that finishes); returns them, recovered."""
    probe = tmp_path / "probe"
    _prepare(probe, *setup)
    total = _run_in_child(probe, action, kill_at=None)
    assert total >= 5, total
    dirs = []
    for kill_at in range(1, total + 2):
        data_dir = tmp_path / f"kill-{kill_at}"
        _prepare(data_dir, *setup)
        code = _run_in_child(data_dir, action, kill_at=kill_at)
        assert (code == -1) == (kill_at <= total)
        dirs.append(data_dir)
    return dirs


def _leftovers(data_dir: Path) -> list[str]:
    weights = data_dir / "checkpoints" / "tr_kill" / "weights"
    return sorted(p.name for p in weights.iterdir() if p.name.startswith("."))


@pytest.mark.slow
def test_a_new_save_killed_at_any_step_is_complete_and_listed_or_absent(tmp_path: Path) -> None:
    def action(store: Store, data_dir: Path) -> None:
        ckpt.save_checkpoint(store, data_dir, _row("fresh", "ck_new"), _data(2.0), overwrite=False)

    outcomes = set()
    for data_dir in _kill_everywhere(tmp_path, ("neighbour",), action):
        row, marker = _state(data_dir, "fresh")
        assert (row is None) == (marker is None), data_dir.name
        assert marker in (None, 2.0)
        assert _leftovers(data_dir) == []
        _assert_neighbour_intact(data_dir)
        outcomes.add(marker)
    assert outcomes == {None, 2.0}  # both ends were reached


@pytest.mark.slow
def test_an_overwrite_killed_at_any_step_keeps_the_old_or_the_new_checkpoint(
    tmp_path: Path,
) -> None:
    def action(store: Store, data_dir: Path) -> None:
        existing = store.checkpoint_by_uri("trio://tr_kill/weights/kept")
        row = replace(_row("kept", existing.cuid), step=2)
        ckpt.save_checkpoint(store, data_dir, row, _data(2.0), overwrite=True)

    outcomes = set()
    for data_dir in _kill_everywhere(tmp_path, ("kept", "neighbour"), action):
        row, marker = _state(data_dir, "kept")
        assert row is not None, f"{data_dir.name}: the checkpoint was lost"
        assert marker in (1.0, 2.0), data_dir.name
        assert _leftovers(data_dir) == []
        _assert_neighbour_intact(data_dir)
        outcomes.add(marker)
    assert outcomes == {1.0, 2.0}


@pytest.mark.slow
def test_a_delete_killed_at_any_step_leaves_the_checkpoint_whole_or_gone(tmp_path: Path) -> None:
    def action(store: Store, data_dir: Path) -> None:
        row = store.checkpoint_by_uri("trio://tr_kill/weights/gone")
        ckpt.delete_checkpoint(store, data_dir, row)

    outcomes = set()
    for data_dir in _kill_everywhere(tmp_path, ("gone", "neighbour"), action):
        row, marker = _state(data_dir, "gone")
        assert (row is None) == (marker is None), data_dir.name
        assert _leftovers(data_dir) == []
        _assert_neighbour_intact(data_dir)
        outcomes.add(marker)
    assert outcomes == {None, 1.0}


def test_a_row_replacement_killed_between_delete_and_insert_keeps_the_row(tmp_path: Path) -> None:
    """The overwrite's DELETE and INSERT commit together: a kill between them loses nothing."""
    store = Store(tmp_path / DB)
    store.add_checkpoint(replace(_row("kept", "ck_0"), size_bytes=1))
    store.close()

    def action(store: Store) -> None:
        existing = store.checkpoint_by_uri("trio://tr_kill/weights/kept")
        store._conn.set_trace_callback(
            lambda sql: os._exit(KILLED) if sql.startswith("INSERT INTO checkpoints") else None
        )
        store.add_checkpoint(replace(existing, step=5))

    pid = os.fork()
    if pid == 0:
        try:
            action(Store(tmp_path / DB))
        finally:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == KILLED
    store = Store(tmp_path / DB)
    row = store.checkpoint_by_uri("trio://tr_kill/weights/kept")
    store.close()
    assert row is not None and row.step == 0
