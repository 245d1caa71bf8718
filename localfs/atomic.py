"""Atomic writes: a temporary file beside the target, then one rename over it.

A reader sees the old bytes or the new, never a part; the temporary file never outlives the call,
whatever ends it (an error, KeyboardInterrupt, SystemExit from a signal handler). `durable` adds
the two fsyncs that make the result survive a crash: the file's data before the rename, and its
directory's entry after it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import BinaryIO

StrPath = str | os.PathLike[str]


def fsync_dir(path: StrPath) -> None:
    """Make a rename inside `path` durable (the directory entry itself must reach disk)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_file(
    target: StrPath,
    *,
    prefix: str | None = None,
    suffix: str = "",
    mode: int | None = None,
    durable: bool = False,
    parents: bool = False,
    before_replace: Callable[[], None] | None = None,
) -> Iterator[BinaryIO]:
    """A binary file to write that appears at `target` complete when the block ends, or not at
    all when it raises. The temporary file is `<prefix><random><suffix>` in `target`'s directory
    (`prefix` defaults to `.<name>.`, a hidden name); `mode`: the new file's permission bits
    (default: mkstemp's 0o600); `parents`: create missing parent directories first;
    `before_replace`: the last check before the rename (raising keeps `target` as it was)."""
    import tempfile  # only writes need it: spared on a run that only reads

    path = os.fspath(target)
    directory, name = os.path.split(path)
    directory = directory or "."
    if parents:
        os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(
        dir=directory, prefix=f".{name}." if prefix is None else prefix, suffix=suffix
    )
    try:
        with os.fdopen(fd, "wb") as handle:
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            yield handle
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        if before_replace is not None:
            before_replace()
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        fsync_dir(directory)


def write_atomic(
    target: StrPath,
    data: bytes,
    *,
    prefix: str | None = None,
    suffix: str = "",
    mode: int | None = None,
    durable: bool = False,
    parents: bool = False,
    before_replace: Callable[[], None] | None = None,
) -> None:
    """Write `data` to `target` atomically (see `atomic_file` for the options)."""
    with atomic_file(
        target,
        prefix=prefix,
        suffix=suffix,
        mode=mode,
        durable=durable,
        parents=parents,
        before_replace=before_replace,
    ) as handle:
        handle.write(data)
