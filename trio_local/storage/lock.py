"""One service per data directory: an exclusive, non-blocking lock held while it serves.

Two services on one directory would each end the other's runs at start-up and race on the
same checkpoint files. The lock is `flock` on a file in the directory, so the kernel drops it
when the process dies (even by SIGKILL): a crash never leaves a stale lock behind.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from trio_local.config import ConfigError

LOCK_FILE = "trio-local.lock"


class DataDirInUse(ConfigError):
    """Another trio-local process serves this data directory."""


class DataDirLock:
    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> DataDirLock:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise DataDirInUse(
                f"the data directory {self.path.parent} is in use by another trio-local "
                f"(pid {holder}); stop that service, or pass another --data-dir"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
