"""Storage failures as a user reads them: the cause and the data directory, and what to do.

A full disk or a read-only file system is not a bug of trio-local: every plane answers it by
name (a failed event or a 4xx with the SDK's storage code, one line and exit 2 at start-up)
instead of `internal_error` or a traceback.
"""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

from trio_local.config import ConfigError

_CAUSES = {
    errno.ENOSPC: "its disk is full (no space left on device)",
    errno.EDQUOT: "its disk quota is used up",
    errno.EROFS: "it is on a read-only file system",
    errno.EACCES: "trio-local may not write there (permission denied)",
    errno.EPERM: "trio-local may not write there (operation not permitted)",
    errno.ENOTDIR: "it, or a folder on its path, is a file, not a directory",
    errno.EEXIST: "a file of that name is in the way",
}
# SQLite reports these through its own codes, with these messages (sqlite3 `sqlite3_errstr`).
_SQLITE_CAUSES = (
    ("disk is full", _CAUSES[errno.ENOSPC]),
    ("readonly database", _CAUSES[errno.EROFS]),
    ("disk i/o error", "reading or writing its database failed (disk I/O error)"),
    ("unable to open database", "its database cannot be opened"),
)


class DataDirUnusable(ConfigError):
    """The data directory cannot be read or written; the message names why."""


def cause(error: BaseException) -> str | None:
    """What went wrong with the storage, in words, or None when `error` is not a storage fault."""
    if isinstance(error, sqlite3.Error):
        text = str(error).lower()
        return next((words for key, words in _SQLITE_CAUSES if key in text), None)
    if isinstance(error, OSError) and error.errno is not None:
        return _CAUSES.get(error.errno)
    return None


def describe(error: BaseException, data_dir: Path) -> str | None:
    """A one-line message naming the cause and `data_dir` (for "trio-local: ..." or "trio-local
    ..."), or None for other errors."""
    words = cause(error)
    if words is None:
        return None
    return (
        f"cannot write the data directory {data_dir}: {words}; free space or fix the "
        "directory, or start trio-local with another --data-dir"
    )
