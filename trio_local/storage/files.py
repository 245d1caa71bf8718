"""Crash-safe directory writes: a staging directory, fsync, then one atomic rename (single
files: `localfs.atomic`)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from localfs.atomic import fsync_dir


def fsync_tree(root: Path) -> None:
    for path in sorted(root.rglob("*")):
        if path.is_file():
            with path.open("rb") as handle:
                os.fsync(handle.fileno())
    fsync_dir(root)


@contextlib.contextmanager
def staged_directory(target: Path, *, overwrite: bool) -> Iterator[Path]:
    """Yield an empty staging directory that replaces `target` only if the block succeeds.

    Readers see either the old complete directory or the new complete one: the files are
    fsynced, then the staging directory is renamed over the target in one step.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        yield staging
        fsync_tree(staging)
        if target.exists():
            if not overwrite:
                raise FileExistsError(target)
            retired = target.with_name(f".{target.name}.old")
            shutil.rmtree(retired, ignore_errors=True)
            target.rename(retired)
            staging.rename(target)
            shutil.rmtree(retired, ignore_errors=True)
        else:
            staging.rename(target)
        fsync_dir(target.parent)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


# The only dot-names trio-local makes beside a checkpoint: a staging directory (mkdtemp's 8
# random characters), the retired copy of an overwrite (.old) and a retired delete (.del).
STAGING_NAME = re.compile(r"\.(?P<name>.+)\.(?:[a-z0-9_]{8}|old|del)")
RETIRED_DELETE = ".del"


def retire_directory(target: Path) -> Path:
    """Rename `target` out of the way in one step; recovery removes it if we die after."""
    retired = target.with_name(f".{target.name}{RETIRED_DELETE}")
    shutil.rmtree(retired, ignore_errors=True)
    target.rename(retired)
    fsync_dir(target.parent)
    return retired


def is_staging_name(name: str) -> bool:
    return STAGING_NAME.fullmatch(name) is not None
