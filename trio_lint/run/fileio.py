"""Reading the files a run lints and writing their fixes back, so that neither can hang, exhaust
memory, or lose a byte the user wrote.

Reads: only regular files (a FIFO named `x.py` would block `open` forever, `/dev/zero` never
ends), with the size checked from `stat` before any byte is read and the read itself bounded.

Writes: the fixed bytes go to a temporary file beside the target, which replaces the target
atomically only if the target still holds the bytes the fix was computed from (compare and
swap: an edit made while the run was busy is never overwritten); a symlink's target is written,
the link stays a link. Temporary files carry the writer's pid, so the ones a killed run left
behind can be told from the ones a live run is writing, and removed."""

from __future__ import annotations

import errno
import os
import re
import stat as stat_module
import time

# The one limit on what is linted (parse.decode checks text given directly, e.g. by the editor).
MAX_FILE_BYTES = 10 * 1024 * 1024
TEMP_MARK = ".trio-lint-"
TEMP_SUFFIX = ".tmp"
# `.<name>.trio-lint-<pid>-<random>.tmp`: what `write_fixed` creates beside `<name>`.
_TEMP_NAME = re.compile(r"^\.(?P<name>.+)\.trio-lint-(?P<pid>\d+)-[^./]+\.tmp$")
STALE_AFTER_S = 3600.0  # a temp file this old is stale even if its pid is alive (pid reuse)
_READ_CHUNK = 1 << 20


class NotRegularFile(OSError):
    """A FIFO, socket or device where a source file was expected: never opened for reading."""


class TooLarge(OSError):
    """Larger than `MAX_FILE_BYTES` (checked from `stat` before reading, and while reading)."""


class ChangedMeanwhile(OSError):
    """The file no longer holds the bytes a fix was computed from: the fix was not written."""


class ReadOnly(OSError):
    """The file is read-only: its fixes are not written (the rename that writes them needs only
    a writable folder, so the file's own mode is checked first)."""


def too_large_message(limit: int = MAX_FILE_BYTES) -> str:
    return f"file is larger than {limit // (1024 * 1024)} MiB; skipped"


def _kind(mode: int) -> str:
    if stat_module.S_ISFIFO(mode):
        return "a FIFO"
    if stat_module.S_ISSOCK(mode):
        return "a socket"
    if stat_module.S_ISCHR(mode) or stat_module.S_ISBLK(mode):
        return "a device"
    if stat_module.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def check_regular(path: str, st: os.stat_result, limit: int = MAX_FILE_BYTES) -> None:
    """Raise NotRegularFile / TooLarge for what `read_regular` would refuse."""
    if not stat_module.S_ISREG(st.st_mode):
        kind = _kind(st.st_mode)
        raise NotRegularFile(errno.EINVAL, f"not a regular file ({kind}); skipped", path)
    if st.st_size > limit:
        raise TooLarge(errno.EFBIG, too_large_message(limit), path)


def read_regular(path: str, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the regular file at `path` (symlinks followed). Raises OSError: the file's
    own errors, NotRegularFile, or TooLarge (before reading, from `stat`; or when it grew past
    `limit` while being read)."""
    check_regular(path, os.stat(path), limit)
    # O_NONBLOCK: should the path have become a FIFO since the stat, opening it does not wait
    # for a writer; the fstat below then refuses it. (It changes nothing for a regular file.)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        check_regular(path, os.fstat(fd), limit)
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(_READ_CHUNK, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise TooLarge(errno.EFBIG, too_large_message(limit), path)
        return b"".join(chunks)
    finally:
        os.close(fd)


def write_fixed(path: str, data: bytes, expected: bytes) -> str:
    """Replace the file at `path` with `data` if it still holds `expected`; returns the path
    written (a symlink's target). Raises ChangedMeanwhile (nothing written) when the file changed
    since it was read, ReadOnly (nothing written) when the file is read-only, OSError when it
    cannot be written; the temporary file never outlives the call, whatever ends it (an error,
    KeyboardInterrupt, SystemExit from a signal handler)."""
    target = os.path.realpath(path)
    name = os.path.basename(target)
    mode = stat_module.S_IMODE(os.stat(target).st_mode)
    # No write bit for anyone (root too: `os.access` says yes to root), or none for this user:
    # someone made the file read-only on purpose (a vendored or generated file, a locked
    # git-annex object), and an atomic rename would replace it anyway.
    if not mode & 0o222 or not os.access(target, os.W_OK):
        raise ReadOnly(
            errno.EACCES,
            f"the file is read-only (mode {mode:04o}); nothing written: make it writable to fix it",
            path,
        )

    def unchanged() -> None:
        # Compare and swap: the bytes are compared as late as possible, right before the rename.
        if read_regular(target) != expected:
            raise ChangedMeanwhile(
                errno.EAGAIN, "the file changed while it was being fixed; not written", path
            )

    from localfs.atomic import write_atomic  # only writes need it

    write_atomic(
        target,
        data,
        prefix=f".{name}{TEMP_MARK}{os.getpid()}-",
        suffix=TEMP_SUFFIX,
        mode=mode,
        durable=True,
        before_replace=unchanged,
    )
    return target


def is_temp_name(name: str) -> bool:
    """Cheap test, for the walk, of names `write_fixed` may have left behind."""
    return name.endswith(TEMP_SUFFIX) and TEMP_MARK in name and name.startswith(".")


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def is_stale(path: str, now: float | None = None) -> bool:
    """A temp file of `write_fixed` whose writer is gone (or that is older than an hour)."""
    match = _TEMP_NAME.match(os.path.basename(path))
    if match is None:
        return False
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if not stat_module.S_ISREG(st.st_mode):
        return False
    age = (now if now is not None else time.time()) - st.st_mtime
    return age > STALE_AFTER_S or not _pid_alive(int(match.group("pid")))


def remove_stale(paths: list[str]) -> list[str]:
    """Remove the temp files among `paths` that a killed run left behind; returns those removed."""
    removed = []
    now = time.time()
    for path in paths:
        if is_stale(path, now):
            try:
                os.unlink(path)
            except OSError:
                continue
            removed.append(path)
    return removed


def stale_beside(directory: str) -> list[str]:
    """The stale temp files in `directory` (for files named on the command line, which the walk
    does not list)."""
    try:
        with os.scandir(directory) as listing:
            names = [entry.name for entry in listing if is_temp_name(entry.name)]
    except OSError:
        return []
    return [os.path.join(directory, name) for name in names]
