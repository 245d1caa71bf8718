"""A data directory that is moved, copied or shared: nothing lost, nothing crossed over."""

from __future__ import annotations

import dataclasses
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import pytrio as trio

import trio_local
from trio_local.storage.db import SCHEMA_VERSION, DataDirTooNew, Store
from trio_local.storage.rows import CheckpointRow, NewTrainingRun, SessionRow, TrainingRunRow

MODEL = "Qwen/Qwen3-4B-Instruct-2507"


def _datum(training) -> trio.Datum:
    tokens = training.get_tokenizer().encode("a portable data directory")
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": tokens[1:]},
    )


def _checkpoint_dirs(data_dir: Path) -> list[str]:
    root = data_dir / "checkpoints"
    return sorted(str(p.relative_to(data_dir)) for p in root.glob("*/*/*") if p.is_dir())


def _serve_refused(data_dir: Path) -> subprocess.CompletedProcess:
    """`trio-local serve` on `data_dir`, expected to refuse it and exit at once."""
    command = [str(Path(sys.executable).with_name("trio-local")), "serve", "--port", "0"]
    return subprocess.run(
        [*command, "--data-dir", str(data_dir)],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.slow
def test_moved_then_copied_data_dir_keeps_checkpoints_and_a_copy_never_reaches_the_original(
    tmp_path: Path,
) -> None:
    trio.configure_observability(enabled=False)
    first = tmp_path / "first"
    with trio_local.serve_in_background(data_dir=first):
        training = trio.ServiceClient().create_lora_training_client(base_model=MODEL, rank=4)
        datum = _datum(training)
        training.forward_backward([datum], "cross_entropy").result()
        training.optim_step(trio.AdamParams(learning_rate=1e-3)).result()
        state = training.save_state("portable").result().path
        weights = training.save_weights_for_sampler("portable-sampler").result().path
        expected = training.forward([datum], "cross_entropy").result().metrics["loss_sum"]
    saved_dirs = _checkpoint_dirs(first)
    assert len(saved_dirs) == 2

    moved = tmp_path / "moved"
    first.rename(moved)
    with trio_local.serve_in_background(data_dir=moved):
        client = trio.ServiceClient()
        rest = client.create_rest_client()
        listed = [c.path for c in rest.list_user_checkpoints().result().checkpoints]
        assert sorted(listed) == sorted([state, weights])
        resumed = client.create_training_client_from_state_with_optimizer(state)
        loss = resumed.forward([datum], "cross_entropy").result().metrics["loss_sum"]
        assert abs(loss - expected) <= 1e-4
    assert _checkpoint_dirs(moved) == saved_dirs
    assert not (moved / "quarantine").exists()

    copy = tmp_path / "copy"
    shutil.copytree(moved, copy)
    with trio_local.serve_in_background(data_dir=copy):
        rest = trio.ServiceClient().create_rest_client()
        for checkpoint in rest.list_user_checkpoints().result().checkpoints:
            run_id = checkpoint.path.removeprefix("trio://").split("/")[0]
            rest.delete_checkpoint(run_id, checkpoint.checkpoint_id).result()
        assert rest.list_user_checkpoints().result().checkpoints == []
    assert _checkpoint_dirs(copy) == []
    assert _checkpoint_dirs(moved) == saved_dirs  # the original is untouched
    store = Store(moved / "trio-local.sqlite3")
    assert len(store.all_checkpoints()) == 2
    store.close()


def test_unrecognised_directories_are_quarantined_and_logged_never_deleted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    stray = tmp_path / "checkpoints" / "tr_unknown" / "weights" / "restored-by-hand"
    stray.mkdir(parents=True)
    (stray / "adapter_model.safetensors").write_bytes(b"precious")
    (tmp_path / "checkpoints" / "tr_unknown" / "weights" / "notes.txt").write_text("mine")
    with (
        caplog.at_level(logging.WARNING, logger="trio_local"),
        trio_local.serve_in_background(data_dir=tmp_path, configure_sdk=False),
    ):
        pass
    assert not stray.exists()
    kept = list((tmp_path / "quarantine").glob("*/checkpoints/tr_unknown/weights/restored-by-hand"))
    assert len(kept) == 1
    assert (kept[0] / "adapter_model.safetensors").read_bytes() == b"precious"
    assert (tmp_path / "checkpoints" / "tr_unknown" / "weights" / "notes.txt").read_text() == "mine"
    assert any(
        "restored-by-hand" in r.message and "quarantine" in r.message for r in caplog.records
    )


def test_a_second_service_on_the_same_data_dir_is_refused(tmp_path: Path) -> None:
    from trio_local.storage.lock import DataDirInUse

    with trio_local.serve_in_background(data_dir=tmp_path, configure_sdk=False):
        with (
            pytest.raises(DataDirInUse, match="in use by another trio-local"),
            trio_local.serve_in_background(data_dir=tmp_path, configure_sdk=False),
        ):
            pass
        second = _serve_refused(tmp_path)
        assert second.returncode == 2
        assert f"pid {os.getpid()}" in second.stderr
        assert "--data-dir" in second.stderr
    # released on stop: the directory can be served again
    with trio_local.serve_in_background(data_dir=tmp_path, configure_sdk=False):
        pass


# The schema of data directories written before the database carried a version (user_version
# 0): the tables as trio-local created them then, with one row of each kind.
UNVERSIONED = [
    "CREATE TABLE sessions (cuid TEXT PRIMARY KEY, status TEXT NOT NULL, sdk_version TEXT,"
    " created_at TEXT NOT NULL, updated_at TEXT NOT NULL)",
    "CREATE TABLE training_runs (cuid TEXT PRIMARY KEY, session_cuid TEXT NOT NULL,"
    " run_index INTEGER NOT NULL, model_id TEXT NOT NULL, lora_rank INTEGER NOT NULL,"
    " seed INTEGER, train_mlp INTEGER NOT NULL, train_attn INTEGER NOT NULL,"
    " train_unembed INTEGER NOT NULL, source_checkpoint_uri TEXT,"
    " restore_optimizer INTEGER NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL,"
    " started_at TEXT, ended_at TEXT, updated_at TEXT NOT NULL)",
    "INSERT INTO sessions VALUES ('ss_old', 'ENDED', '0.2.9', '2026-01-01', '2026-01-01')",
    "INSERT INTO training_runs VALUES ('tr_old', 'ss_old', 1, 'Qwen/Qwen3-8B', 8, 1, 1, 1, 0,"
    " NULL, 0, 'ENDED', '2026-01-01', NULL, NULL, '2026-01-01')",
]


def _version(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute("PRAGMA user_version").fetchone()[0]


def test_a_data_dir_from_before_versioning_is_migrated_with_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "trio-local.sqlite3"
    with sqlite3.connect(path) as conn:
        for statement in UNVERSIONED:
            conn.execute(statement)
    store = Store(path)
    try:
        assert store.training_run("tr_old").lora_rank == 8
        assert store.session("ss_old").status == "ENDED"
        new = store.create_training_run(
            "ss_old",
            NewTrainingRun(
                model_id=MODEL,
                lora_rank=4,
                train_mlp=True,
                train_attn=True,
                train_unembed=False,
            ),
        )
        assert new.run_index == 2 and new.status == "CREATED"
        assert store.all_checkpoints() == []  # the table the old layout lacked is there
    finally:
        store.close()
    assert _version(path) == SCHEMA_VERSION
    fresh = Store(tmp_path / "fresh.sqlite3")
    fresh.close()
    assert _version(tmp_path / "fresh.sqlite3") == SCHEMA_VERSION


def test_a_data_dir_from_a_newer_trio_local_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "trio-local.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE future (x)")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    before = path.read_bytes()
    with pytest.raises(DataDirTooNew, match="newer trio-local"):
        Store(path)
    assert path.read_bytes() == before
    done = _serve_refused(tmp_path)
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip()
    assert "\n" not in line and "newer trio-local" in line and str(tmp_path) in line
    assert path.read_bytes() == before


def test_rows_are_frozen_and_read_and_written_by_column_name(tmp_path: Path) -> None:
    """A table whose columns sit in another order and carry one this code does not know (a
    data dir from a later layout): inserts name their columns and rows are read by name, so no
    value lands in another field; a row is a frozen dataclass, not a dict."""
    path = tmp_path / "trio-local.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE checkpoints (expires_at TEXT, created_at TEXT NOT NULL, future TEXT,"
            " model_id TEXT NOT NULL, lora_rank INTEGER NOT NULL, size_bytes INTEGER NOT NULL,"
            " step INTEGER, path TEXT NOT NULL, uri TEXT NOT NULL UNIQUE, kind TEXT NOT NULL,"
            " name TEXT NOT NULL, run_cuid TEXT NOT NULL, cuid TEXT PRIMARY KEY)"
        )
        conn.execute(
            "CREATE TABLE sessions (updated_at TEXT NOT NULL, created_at TEXT NOT NULL,"
            " sdk_version TEXT, status TEXT NOT NULL, cuid TEXT PRIMARY KEY, future TEXT)"
        )
    row = CheckpointRow(
        cuid="ck_1",
        run_cuid="tr_1",
        name="kept",
        kind="TRAINING",
        uri="trio://tr_1/weights/kept",
        path="checkpoints/tr_1/weights/kept",
        step=7,
        size_bytes=1234,
        lora_rank=4,
        model_id=MODEL,
        created_at="2026-12-04T00:00:00+00:00",
        expires_at=None,
    )
    store = Store(path)
    try:
        assert store.add_checkpoint(row) == row
        (read,) = store.all_checkpoints()
        assert read == row and type(read) is CheckpointRow
        with pytest.raises(dataclasses.FrozenInstanceError):
            read.step = 8  # type: ignore[misc]
        session = store.create_session("0.2.9")
        assert isinstance(session, SessionRow) and session.cuid.startswith("ss_")
        assert (session.status, session.sdk_version) == ("ACTIVE", "0.2.9")
        assert store.session(session.cuid) == session
        run = store.create_training_run(
            session.cuid,
            NewTrainingRun(
                model_id=MODEL,
                lora_rank=8,
                train_mlp=True,
                train_attn=True,
                train_unembed=False,
            ),
        )
        assert isinstance(run, TrainingRunRow) and run.lora_rank == 8 and run.run_index == 1
    finally:
        store.close()
    with sqlite3.connect(path) as conn:  # written by name: each value sits in its own column
        stored = conn.execute("SELECT size_bytes, step, future FROM checkpoints").fetchone()
    assert stored == (1234, 7, None)
