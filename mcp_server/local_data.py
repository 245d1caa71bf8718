"""Where the local backend (trio-local) keeps its runs and checkpoints.

By default that is trio-local's own data directory, so what an agent trained and saved outlives
the server: a restarted server resumes the checkpoints the last one saved. `local_data_dir`
names another directory, or `temporary` for a throwaway one.

A throwaway directory is removed when the server stops; one left behind by a server that was
killed (SIGKILL gives it no chance to clean up) is removed by the next server that starts. Each
holds a lock file while its server runs (`flock`, which the kernel drops when the process dies),
so a directory is stale exactly when its lock can be taken.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

log = logging.getLogger("trio_mcp.backend")

PREFIX = "trio-mcp-local-"
LOCK = "trio-mcp.lock"


def persistent_dir(configured: Path | None) -> Path:
    """The configured directory, else trio-local's default ($TRIO_LOCAL_DATA_DIR, else
    $XDG_DATA_HOME/trio-local, else ~/.local/share/trio-local)."""
    if configured is not None:
        return configured
    from trio_local.config import default_data_dir

    return default_data_dir()


def _lock(path: Path, *, blocking: bool) -> int | None:
    """An exclusive lock on `path` (an open descriptor), or None if another process holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


def sweep_stale(root: Path | None = None) -> list[Path]:
    """Remove this user's throwaway directories whose server is gone; return what was removed."""
    root = Path(tempfile.gettempdir()) if root is None else root
    removed = []
    for candidate in sorted(root.glob(PREFIX + "*")):
        lock = candidate / LOCK
        try:
            if candidate.is_symlink() or candidate.stat().st_uid != os.getuid():
                continue
            if not lock.is_file():
                continue  # being created right now (the lock comes first thing after mkdtemp)
            fd = _lock(lock, blocking=False)
        except OSError:
            continue
        if fd is None:
            continue  # its server is running
        try:
            shutil.rmtree(candidate, ignore_errors=True)
        finally:
            os.close(fd)
        removed.append(candidate)
        log.info("removed %s, left behind by a server that was killed", candidate)
    return removed


@contextlib.contextmanager
def throwaway_dir(root: Path | None = None) -> Iterator[Path]:
    """A new data directory, removed at the end of the block (or by the next server's sweep)."""
    sweep_stale(root)
    path = Path(tempfile.mkdtemp(prefix=PREFIX, dir=root))
    fd = _lock(path / LOCK, blocking=True)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        if fd is not None:
            os.close(fd)
