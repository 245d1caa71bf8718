"""Start-up recovery after a crash: checkpoint files and SQLite agree again.

A save writes the checkpoint into a staging directory, renames it into place, then records it
in SQLite; the SQLite row is the commit point. A process killed anywhere in between leaves one
of these, each repaired here before the service answers anyone:

- an overwrite interrupted between its two renames: the retired `.<name>.old` directory is put
  back, so the previous complete checkpoint survives;
- trio-local's own staging leftovers beside a checkpoint (`.<name>.<8 chars>`, `.<name>.old`,
  `.<name>.del`): removed;
- a row whose directory is missing: removed;
- a download archive being built when the process died (`archives/.<name>.tar.<8 chars>`):
  removed (archives are rebuilt on demand);
- an overwrite renamed into place but not yet recorded: the row is updated from the files.

Anything else recovery does not recognise (a complete directory with no row, a recorded
directory that is incomplete) is never deleted: it is moved under `quarantine/` and logged, so
a data directory that was moved, copied or restored by hand cannot lose checkpoints here.
Rows written by older versions with absolute paths are rewritten relative to the data directory.

So after a restart a checkpoint is either complete and listed, or absent from both.
"""

from __future__ import annotations

import json
import logging
import shutil
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from trio_local.storage.checkpoints import (
    ADAPTER_CONFIG,
    ADAPTER_FILE,
    ARCHIVES_DIR,
    CHECKPOINTS_DIR,
    KIND_DIRS,
    TRAINER_STATE,
    relative_dir,
    resolve,
)
from trio_local.storage.db import Store
from trio_local.storage.files import is_staging_name
from trio_local.storage.rows import CheckpointKind

logger = logging.getLogger("trio_local")
QUARANTINE_DIR = "quarantine"


def _kind_dirs(root: Path) -> list[Path]:
    return [path for name in KIND_DIRS.values() for path in root.glob(f"*/{name}") if path.is_dir()]


def _restore_retired(root: Path) -> None:
    for kind_dir in _kind_dirs(root):
        for retired in kind_dir.glob(".*.old"):
            original = retired.with_name(retired.name[1 : -len(".old")])
            if retired.is_dir() and not original.exists():
                retired.rename(original)


def _remove_staging(root: Path) -> None:
    for kind_dir in _kind_dirs(root):
        for path in kind_dir.iterdir():
            if path.is_dir() and not path.is_symlink() and is_staging_name(path.name):
                shutil.rmtree(path, ignore_errors=True)


def _remove_partial_archives(data_dir: Path) -> None:
    # atomic_file's temp names start with a dot; a complete archive never does.
    archives = data_dir / ARCHIVES_DIR
    if archives.is_dir() and not archives.is_symlink():
        for path in archives.glob(".*"):
            if not path.is_dir() or path.is_symlink():
                path.unlink(missing_ok=True)


def is_complete(path: Path, kind: CheckpointKind) -> bool:
    required = [ADAPTER_FILE, ADAPTER_CONFIG] + (
        [TRAINER_STATE] if kind == CheckpointKind.TRAINING else []
    )
    return path.is_dir() and all((path / name).is_file() for name in required)


def _size(path: Path) -> int:
    return sum(item.stat().st_size for item in path.iterdir() if item.is_file())


def _step(path: Path, default: int | None) -> int | None:
    try:
        return int(json.loads((path / TRAINER_STATE).read_text())["optim_steps"])
    except (OSError, ValueError, KeyError, TypeError):
        return default


def quarantine(data_dir: Path, path: Path, reason: str, stamp: str) -> Path:
    """Move `path` under quarantine/<stamp>/, keeping its place in the data directory."""
    relative = path.relative_to(data_dir)
    target = data_dir / QUARANTINE_DIR / stamp / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    path.rename(target)
    logger.warning(
        "trio-local recovery: %s %s; moved it to %s (nothing was deleted)",
        relative,
        reason,
        target,
    )
    return target


def _migrate_paths(store: Store) -> None:
    """Rows of older versions hold absolute paths; the layout gives the relative one."""
    with store.transaction():
        for row in store.all_checkpoints():
            expected = relative_dir(row.run_cuid, row.kind, row.name)
            if row.path != expected:
                store.set_checkpoint_path(row.cuid, expected)


def recover_checkpoints(store: Store, data_dir: Path) -> list[Path]:
    """Repair what a crash left; return where unrecognised directories were quarantined."""
    root = data_dir / CHECKPOINTS_DIR
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    _migrate_paths(store)
    _remove_partial_archives(data_dir)
    if root.exists():
        _restore_retired(root)
        _remove_staging(root)
    recorded: set[Path] = set()
    moved: list[Path] = []
    with store.transaction():
        for row in store.all_checkpoints():
            path = resolve(data_dir, row.path)
            if not is_complete(path, row.kind):
                store.delete_checkpoint(row.cuid)
                if path.exists() or path.is_symlink():
                    moved.append(quarantine(data_dir, path, "is an incomplete checkpoint", stamp))
                continue
            recorded.add(path)
            size = _size(path)
            if size != row.size_bytes:
                store.add_checkpoint(replace(row, size_bytes=size, step=_step(path, row.step)))
    if not root.exists():
        return moved
    for kind_dir in _kind_dirs(root):
        for path in sorted(kind_dir.iterdir()):
            if path.name.startswith(".") or path in recorded:
                continue
            if path.is_dir() or path.is_symlink():
                moved.append(quarantine(data_dir, path, "is not a recorded checkpoint", stamp))
    return moved
