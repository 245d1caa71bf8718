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

from trio_local.storage import reading
from trio_local.storage.files import retire_directory, staged_directory
from trio_local.storage.rows import CheckpointKind, CheckpointRow

if TYPE_CHECKING:
    from trio_local.storage.db import Store

ADAPTER_FILE = "adapter_model.safetensors"
ADAPTER_CONFIG = "adapter_config.json"
OPTIMIZER_FILE = "optimizer.safetensors"
TRAINER_STATE = "trainer_state.json"
# Files a downloaded archive carries: the adapter, loadable by peft.
ARCHIVE_FILES = (ADAPTER_CONFIG, ADAPTER_FILE)
CHECKPOINTS_DIR = "checkpoints"
# Download archives (`archives/<cuid>-<size>.tar`), built on demand from the files above.
ARCHIVES_DIR = "archives"
KIND_DIRS = {CheckpointKind.TRAINING: "weights", CheckpointKind.SAMPLER: "sampler_weights"}


def relative_dir(run_id: str, kind: CheckpointKind, name: str) -> str:
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


def _tensor_bytes(tensors: dict[str, Any]) -> bytes:
    from safetensors.torch import save

    return save(tensors)


def write_checkpoint(target: Path, data: CheckpointData, *, overwrite: bool) -> int:
    """Write `data` to `target` atomically and return the checkpoint's size in bytes.

    The adapter config, written last, records the SHA-256 of every other file (under
    `trio_local.sha256`), so a file changed afterwards is refused when it is read.
    """
    files: dict[str, bytes] = {ADAPTER_FILE: _tensor_bytes(data.adapter)}
    if data.optimizer is not None:
        files[OPTIMIZER_FILE] = _tensor_bytes(data.optimizer)
    if data.trainer_state is not None:
        files[TRAINER_STATE] = json.dumps(data.trainer_state, indent=2).encode()
    own = dict(data.adapter_config.get("trio_local", {}))
    own["sha256"] = {name: reading.digest(content) for name, content in files.items()}
    config = {**data.adapter_config, "trio_local": own}
    with staged_directory(target, overwrite=overwrite) as staging:
        for name, content in files.items():
            (staging / name).write_bytes(content)
        (staging / ADAPTER_CONFIG).write_text(json.dumps(config, indent=2))
    return sum(path.stat().st_size for path in target.iterdir() if path.is_file())


def read_config(directory: Path, data_dir: Path) -> dict[str, Any]:
    """The checkpoint's adapter_config.json (checked: see `reading`)."""
    data = reading.read_regular(directory / ADAPTER_CONFIG, data_dir, reading.JSON_MAX)
    return reading.parse_json(ADAPTER_CONFIG, data)


def _recorded(config: dict[str, Any], name: str) -> object:
    digests = config.get("trio_local", {}).get("sha256")
    if digests is None:
        return None  # written by a trio-local before digests: read unverified
    if not isinstance(digests, dict) or not isinstance(digests.get(name), str):
        raise reading.CheckpointDamaged(ADAPTER_CONFIG, f"records no SHA-256 for {name}")
    return digests[name]


def read_tensors(
    directory: Path, name: str, data_dir: Path, config: dict[str, Any], *, max_bytes: int
) -> dict[str, Any]:
    """The tensors of `name` (adapter or optimizer file): a regular file of at most
    `max_bytes`, as recorded in `config`, every value finite."""
    data = reading.read_regular(directory / name, data_dir, max_bytes)
    tensors = reading.parse_tensors(name, data)  # first: a damaged file's cause, named
    reading.check_digest(name, data, _recorded(config, name))
    return tensors


def read_trainer_state(directory: Path, data_dir: Path, config: dict[str, Any]) -> dict[str, Any]:
    data = reading.read_regular(directory / TRAINER_STATE, data_dir, reading.JSON_MAX)
    state = reading.parse_json(TRAINER_STATE, data)
    reading.check_digest(TRAINER_STATE, data, _recorded(config, TRAINER_STATE))
    return state


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
