"""Start-up recovery of checkpoints for each state a crash can leave (storage/recovery.py)."""

from __future__ import annotations

import json
from pathlib import Path

from trio_local.storage.db import Store, iso, now
from trio_local.storage.recovery import recover_checkpoints
from trio_local.storage.rows import CheckpointRow


def write_checkpoint(path: Path, step: int, payload: bytes = b"weights") -> int:
    path.mkdir(parents=True)
    (path / "adapter_model.safetensors").write_bytes(payload)
    (path / "adapter_config.json").write_text("{}")
    (path / "trainer_state.json").write_text(json.dumps({"optim_steps": step}))
    return sum(item.stat().st_size for item in path.iterdir())


def record(store: Store, path: Path, name: str, size: int, step: int) -> None:
    del path  # rows record the layout's relative path
    store.add_checkpoint(
        CheckpointRow(
            cuid=f"ck_{name}",
            run_cuid="tr_1",
            name=name,
            kind="TRAINING",
            uri=f"trio://tr_1/weights/{name}",
            path=f"checkpoints/tr_1/weights/{name}",
            step=step,
            size_bytes=size,
            lora_rank=4,
            model_id="Qwen/Qwen3-4B-Instruct-2507",
            created_at=iso(now()),
            expires_at=None,
        )
    )


def test_each_crash_state_ends_complete_and_listed_or_absent(tmp_path: Path) -> None:
    root = tmp_path / "checkpoints"
    weights = root / "tr_1" / "weights"
    store = Store(tmp_path / "db.sqlite3")

    record(store, weights / "kept", "kept", write_checkpoint(weights / "kept", 1), 1)
    write_checkpoint(weights / "uncommitted", 2)  # renamed into place, row never written
    record(store, weights / "lost", "lost", 10, 3)  # row without files
    partial = weights / "partial"
    record(store, partial, "partial", write_checkpoint(partial, 4), 4)
    (partial / "trainer_state.json").unlink()  # incomplete directory
    retired = weights / ".swapped.old"  # overwrite killed between its two renames
    record(store, weights / "swapped", "swapped", write_checkpoint(retired, 5), 5)
    write_checkpoint(weights / ".swapped.k3j2h1gf", 6)  # its staging directory
    replaced = weights / "replaced"  # overwrite renamed into place, row not yet updated
    record(store, replaced, "replaced", 3, 7)
    write_checkpoint(replaced, 8, payload=b"newer weights")

    moved = recover_checkpoints(store, tmp_path)

    rows = {row.name: row for row in store.all_checkpoints()}
    assert sorted(rows) == ["kept", "replaced", "swapped"]
    assert sorted(p.name for p in weights.iterdir()) == ["kept", "replaced", "swapped"]
    # what recovery cannot vouch for is set aside, never deleted
    assert sorted(p.relative_to(tmp_path).parts[2:] for p in moved) == [
        ("checkpoints", "tr_1", "weights", "partial"),
        ("checkpoints", "tr_1", "weights", "uncommitted"),
    ]
    assert all(p.is_dir() for p in moved)
    assert json.loads((weights / "swapped" / "trainer_state.json").read_text())["optim_steps"] == 5
    for name, row in rows.items():
        files = list((weights / name).iterdir())
        assert row.size_bytes == sum(f.stat().st_size for f in files)
    assert rows["replaced"].step == 8
    store.close()
