"""The store's typed rows: statuses are StrEnums in Python and the same plain strings in SQLite
(a data directory written before they were enums reads the same), and new rows come from typed
requests."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from trio_local.storage.db import Store
from trio_local.storage.rows import (
    NewTrainingRun,
    SamplingRunStatus,
    SessionStatus,
    TrainingRunStatus,
)

MODEL = "Qwen/Qwen3-4B-Instruct-2507"


def test_statuses_are_enums_in_python_and_plain_strings_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "trio-local.sqlite3"
    store = Store(path)
    try:
        session = store.create_session("0.2.9")
        new = NewTrainingRun(
            model_id=MODEL, lora_rank=4, train_mlp=True, train_attn=False, train_unembed=False
        )
        run = store.create_training_run(session.cuid, new)
        sampler = store.create_sampling_run(session.cuid, MODEL, None)
        assert store.move_training_run(
            run.cuid, TrainingRunStatus.RUNNING, stamp_column="started_at"
        )
        store.close_session(session.cuid, SessionStatus.CANCELLED)
        read = store.training_run(run.cuid)
        assert read is not None and read.status is TrainingRunStatus.RUNNING
        assert (read.train_mlp, read.train_attn, read.restore_optimizer) == (1, 0, 0)
        closed = store.session(session.cuid)
        assert closed is not None and closed.status is SessionStatus.CANCELLED
        assert sampler.status is SamplingRunStatus.READY
        # What the wire carries: the bare string, as before the enums.
        assert json.dumps({"status": read.status}) == '{"status": "RUNNING"}'
    finally:
        store.close()
    with sqlite3.connect(path) as conn:
        stored = {
            table: conn.execute(f"SELECT status, typeof(status) FROM {table}").fetchall()
            for table in ("sessions", "training_runs", "sampling_runs")
        }
    assert stored == {
        "sessions": [("CANCELLED", "text")],
        "training_runs": [("RUNNING", "text")],
        "sampling_runs": [("READY", "text")],
    }


def test_rows_written_as_strings_by_an_older_trio_local_read_as_enums(tmp_path: Path) -> None:
    path = tmp_path / "trio-local.sqlite3"
    Store(path).close()  # the schema
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO training_runs (cuid, session_cuid, run_index, model_id, lora_rank, seed,"
            " train_mlp, train_attn, train_unembed, source_checkpoint_uri, restore_optimizer,"
            " status, created_at, started_at, ended_at, updated_at) VALUES ('tr_old', 'ss_old',"
            " 1, ?, 8, NULL, 1, 1, 0, NULL, 0, 'ENDED', '2026-01-01T00:00:00+00:00', NULL,"
            " '2026-01-01T00:00:01+00:00', '2026-01-01T00:00:01+00:00')",
            (MODEL,),
        )
    store = Store(path)
    try:
        row = store.training_run("tr_old")
        assert row is not None and row.status is TrainingRunStatus.ENDED
        assert store.reopen_training_run("tr_old")  # never started: ENDED -> CREATED
        again = store.training_run("tr_old")
        assert again is not None and again.status is TrainingRunStatus.CREATED
    finally:
        store.close()
