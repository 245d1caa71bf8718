"""Checkpoint directories: a peft-style adapter in safetensors, plus optimizer state for
`save_state` checkpoints. Each checkpoint is written into a staging directory and renamed into
place, so after a crash there is the complete checkpoint or none; its SQLite row is the commit
point (`save_checkpoint`).

Directories live at `checkpoints/<run>/<weights|sampler_weights>/<name>` under the data
directory, and rows record that relative path: a moved or copied data directory stays whole.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trio_local.storage.files import retire_directory, staged_directory
from trio_local.storage.rows import CheckpointRow

if TYPE_CHECKING:
    from trio_local.storage.db import Store

ADAPTER_FILE = "adapter_model.safetensors"
ADAPTER_CONFIG = "adapter_config.json"
OPTIMIZER_FILE = "optimizer.safetensors"
TRAINER_STATE = "trainer_state.json"
# Files a downloaded archive carries: the adapter, loadable by peft.
ARCHIVE_FILES = (ADAPTER_CONFIG, ADAPTER_FILE)
CHECKPOINTS_DIR = "checkpoints"
KIND_DIRS = {"TRAINING": "weights", "SAMPLER": "sampler_weights"}


def relative_dir(run_id: str, kind: str, name: str) -> str:
    """Where a checkpoint lives, relative to the data directory (what its row records)."""
    return f"{CHECKPOINTS_DIR}/{run_id}/{KIND_DIRS[kind]}/{name}"


def resolve(data_dir: Path, stored: str) -> Path:
    """The directory of a row's relative `path`, which can never leave the data directory."""
    relative = Path(stored)
    if relative.is_absolute() or ".." in relative.parts or not relative.parts:
        raise ValueError(f"checkpoint path {stored!r} is not relative to the data directory")
    return data_dir / relative


@dataclass
class CheckpointData:
    adapter: dict[str, Any]  # tensors by peft state-dict key
    adapter_config: dict[str, Any]
    optimizer: dict[str, Any] | None = None  # tensors "<param index>.<state key>"
    trainer_state: dict[str, Any] | None = None  # step, param groups, lora settings


def _save_tensors(tensors: dict[str, Any], path: Path) -> None:
    from safetensors.torch import save

    path.write_bytes(save(tensors))


def write_checkpoint(target: Path, data: CheckpointData, *, overwrite: bool) -> int:
    """Write `data` to `target` atomically and return the checkpoint's size in bytes."""
    with staged_directory(target, overwrite=overwrite) as staging:
        _save_tensors(data.adapter, staging / ADAPTER_FILE)
        (staging / ADAPTER_CONFIG).write_text(json.dumps(data.adapter_config, indent=2))
        if data.optimizer is not None:
            _save_tensors(data.optimizer, staging / OPTIMIZER_FILE)
        if data.trainer_state is not None:
            (staging / TRAINER_STATE).write_text(json.dumps(data.trainer_state, indent=2))
    return sum(path.stat().st_size for path in target.iterdir() if path.is_file())


def read_checkpoint(path: Path) -> CheckpointData:
    from safetensors.torch import load_file

    optimizer_path = path / OPTIMIZER_FILE
    state_path = path / TRAINER_STATE
    return CheckpointData(
        adapter=load_file(path / ADAPTER_FILE),
        adapter_config=json.loads((path / ADAPTER_CONFIG).read_text()),
        optimizer=load_file(optimizer_path) if optimizer_path.is_file() else None,
        trainer_state=json.loads(state_path.read_text()) if state_path.is_file() else None,
    )


def save_checkpoint(
    store: Store, data_dir: Path, row: CheckpointRow, data: CheckpointData, *, overwrite: bool
) -> CheckpointRow:
    """Write the files, then commit the row (with the measured size) in one transaction.

    A crash before the commit leaves either the previous checkpoint (an overwrite) or nothing
    that start-up recovery does not recognise; a crash after it, the new checkpoint.
    """
    target = resolve(data_dir, row.path)
    existed = target.exists()
    size = write_checkpoint(target, data, overwrite=overwrite)
    try:
        return store.add_checkpoint(replace(row, size_bytes=size))
    except BaseException:
        if not existed:  # no row will ever name these files (a full disk, say): drop them
            import shutil

            shutil.rmtree(target, ignore_errors=True)
        raise


def delete_checkpoint(store: Store, data_dir: Path, row: CheckpointRow) -> None:
    """Retire the directory (one rename), drop the row, then remove the retired files.

    Only paths inside this data directory are touched, so deleting in a copy of a data
    directory never reaches the original.
    """
    target = resolve(data_dir, row.path)
    retired = retire_directory(target) if target.is_dir() else None
    store.delete_checkpoint(row.cuid)
    if retired is not None:
        import shutil

        shutil.rmtree(retired, ignore_errors=True)
