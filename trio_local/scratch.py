"""`trio-local run`'s scratch directory ($TMPDIR/trio-local-run-*), removed at the end even if
the run was killed: each run holds an flock on its directory's `.lock` while it lives, and
every run first removes the directories whose lock nobody holds (a SIGKILL releases a lock but
skips every `finally`). A directory without a lock is removed once it is an hour old: it was
made by a run killed in the instant before it took its lock, or by a version before locks.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

PREFIX = "trio-local-run-"
LOCK = ".lock"
UNLOCKED_GRACE_S = 3600.0


@contextlib.contextmanager
def scratch_directory() -> Iterator[Path]:
    """A new scratch directory, held (locked) until the block exits, then removed."""
    remove_stale()
    path = Path(tempfile.mkdtemp(prefix=PREFIX))
    fd = _hold(path)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        os.close(fd)


def _hold(path: Path) -> int:
    # Locked under another name, then renamed: `.lock` is never seen unlocked while we live.
    pending = path / f"{LOCK}.new"
    fd = os.open(pending, os.O_CREAT | os.O_RDWR, 0o600)  # not inherited by the child
    fcntl.flock(fd, fcntl.LOCK_EX)
    pending.rename(path / LOCK)
    return fd


def _stale(path: Path) -> bool:
    try:
        fd = os.open(path / LOCK, os.O_RDWR | os.O_NOFOLLOW)
    except FileNotFoundError:
        return time.time() - path.stat().st_mtime > UNLOCKED_GRACE_S
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # a live run holds it
        return False
    finally:
        os.close(fd)  # releases the lock taken just now, if any
    return True


def remove_stale(root: Path | None = None) -> list[Path]:
    """Remove this user's scratch directories of runs that are gone; return them."""
    root = Path(tempfile.gettempdir()) if root is None else root
    removed = []
    for path in root.glob(f"{PREFIX}*"):
        try:
            if path.is_symlink() or not path.is_dir() or path.stat().st_uid != os.getuid():
                continue
            if _stale(path):
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
        except OSError:  # removed by another run meanwhile
            continue
    return removed
