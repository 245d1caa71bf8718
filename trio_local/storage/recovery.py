"""Start-up recovery after a crash: checkpoint files and SQLite agree again.

A save writes the checkpoint into a staging directory, renames it into place, then records it
in SQLite; the SQLite row is the commit point. A process killed anywhere in between leaves one
of these, each repaired here before the service answers anyone:

- an overwrite interrupted between its two renames: the retired `.<name>.old` directory is put
  back, so the previous complete checkpoint survives;
- staging leftovers (dot-directories): removed;
- a complete directory with no row (killed after the rename, before the commit): removed, as the
  client was never told the save succeeded;
- a row whose directory is missing or incomplete: removed;
- an overwrite renamed into place but not yet recorded: the row is updated from the files.

So after a restart a checkpoint is either complete and listed, or absent from both.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from trio_local.storage.checkpoints import ADAPTER_CONFIG, ADAPTER_FILE, TRAINER_STATE
from trio_local.storage.db import Store
from trio_local.storage.files import remove_stale_staging

KIND_DIRS = {"TRAINING": "weights", "SAMPLER": "sampler_weights"}


def _restore_retired(root: Path) -> None:
    for retired in root.glob("*/*/.*.old"):
        original = retired.with_name(retired.name[1 : -len(".old")])
        if retired.is_dir() and not original.exists():
            retired.rename(original)


def is_complete(path: Path, kind: str) -> bool:
    required = [ADAPTER_FILE, ADAPTER_CONFIG] + ([TRAINER_STATE] if kind == "TRAINING" else [])
    return path.is_dir() and all((path / name).is_file() for name in required)


def _size(path: Path) -> int:
    return sum(item.stat().st_size for item in path.iterdir() if item.is_file())


def _step(path: Path, default: int | None) -> int | None:
    try:
        return int(json.loads((path / TRAINER_STATE).read_text())["optim_steps"])
    except (OSError, ValueError, KeyError, TypeError):
        return default


def recover_checkpoints(store: Store, root: Path) -> None:
    if root.exists():
        _restore_retired(root)
        remove_stale_staging(root)
    recorded: set[Path] = set()
    for row in store.all_checkpoints():
        path = Path(row["path"])
        if not is_complete(path, row["kind"]):
            store.delete_checkpoint(row["cuid"])
            shutil.rmtree(path, ignore_errors=True)
            continue
        recorded.add(path.resolve())
        size = _size(path)
        if size != row["size_bytes"]:
            store.add_checkpoint({**row, "size_bytes": size, "step": _step(path, row["step"])})
    if not root.exists():
        return
    for kind_dir in KIND_DIRS.values():
        for path in root.glob(f"*/{kind_dir}/*"):
            if path.is_dir() and not path.name.startswith(".") and path.resolve() not in recorded:
                shutil.rmtree(path, ignore_errors=True)
