"""Content-hash cache: a file whose bytes, config, rule set and tool version are unchanged is not
parsed again. One store file per settings key (a single file for the whole tree, not one per
source file), written atomically (temp file + rename); a missing, truncated or damaged cache is
ignored, never an error.

Entries are keyed on the file's content hash. A warm run trusts the stored hash without reading
the file when the file's stat stamp is unchanged, as git's index, ruff and mypy do. The stamp is
(size, mtime_ns, ctime_ns, inode), not mtime alone: `os.utime` can put an old mtime back after
an edit, but it cannot put back ctime, which the kernel sets on every write and utime call.
Timestamps have a granularity (1 ns on ext4, 2 s on FAT), so a file written in the same tick as
the run that cached it could be edited again without its stamp moving ("racily clean", git's
term): a stamp that is not older than RACY_NS before the run started is not stored, and such a
file is read and hashed again next time. What stays unguarded is only what git also accepts:
a same-size edit whose ctime is forged too (a clock set back, a raw disk edit). `--no-cache`
bypasses the cache entirely."""

from __future__ import annotations

import contextlib
import gc
import marshal
import os
import struct
import sys
import time
import zlib
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from trio_lint.run.digest import digest

if TYPE_CHECKING:
    from trio_lint.output.diagnostics import Diagnostic

    # A cached result: the diagnostics, or None when the prefilter skipped the file.
    Cached = list[Diagnostic] | None


class _Miss(Enum):
    MISS = "miss"


MISS = _Miss.MISS  # the cache cannot answer (None is an answer: the prefilter skipped the file)
if TYPE_CHECKING:
    Lookup = Cached | Literal[_Miss.MISS]


# Stamps this close to the run's start are not trusted next time (covers 2 s FAT/SMB ticks).
RACY_NS = 3_000_000_000
_ENTRY_LEN = 3  # [digest, diagnostics as JSON (or None), stamp (or None)]


def content_hash(data: bytes) -> str:
    return digest(data)


# The store format: MAGIC, then a CRC-32 and a length (8 bytes), then a marshal payload. Not JSON:
# a warm run on a large tree loads ~100k small objects, and marshal builds them 3-4x faster.
# marshal is not meant for untrusted input, so the checksum and length must match before the
# payload is read (a torn or damaged file is dropped), and every value read back is type-checked
# where it is used. The Python version is part of MAGIC: marshal's format may change with it.
MAGIC = b"trio-lint-store/1/py%d.%d\n" % sys.version_info[:2]
STORE_SUFFIXES = (".cache", ".index")
PRUNE_AFTER_S = 14 * 24 * 3600  # stores not used for two weeks are deleted on the next save
TOUCH_AFTER_S = 24 * 3600
STALE_TMP_S = 3600  # no store takes an hour to write: an older temp file's writer was killed


def read_store(file: Path) -> dict:
    """The dict stored in `file`, or {} when it is missing or damaged in any way."""
    from trio_lint.run.fileio import read_regular

    try:
        used = os.stat(file).st_mtime
        raw = read_regular(str(file), limit=1 << 31)  # a FIFO in its place never blocks the run
    except OSError:
        return {}
    header = len(MAGIC) + 8
    if not raw.startswith(MAGIC) or len(raw) < header:
        return {}
    crc, length = struct.unpack_from("<II", raw, len(MAGIC))
    payload = memoryview(raw)[header:]
    if len(payload) != length or zlib.crc32(payload) != crc:
        return {}
    # Decoding creates ~100k containers on a large tree, none of them cyclic: the collector's
    # passes over them are pure cost.
    enabled = gc.isenabled()
    gc.disable()
    try:
        data = marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return {}
    finally:
        if enabled:
            gc.enable()
    if time.time() - used > TOUCH_AFTER_S:
        with contextlib.suppress(OSError):
            os.utime(file)  # still in use: keep it from being pruned
    return data if type(data) is dict else {}


def write_store(directory: Path, file: Path, data: dict) -> None:
    """Temp file + rename: a crash or a concurrent run never leaves a half-written store. Stores
    unused for PRUNE_AFTER_S (other settings, older versions of the linter) are deleted."""
    from localfs.atomic import write_atomic

    try:
        payload = marshal.dumps(data)
        directory.mkdir(parents=True, exist_ok=True)
        marker = directory / ".gitignore"
        if not marker.exists():
            marker.write_text("# Automatically created by trio-lint.\n*\n", encoding="utf-8")
        envelope = MAGIC + struct.pack("<II", zlib.crc32(payload), len(payload)) + payload
        write_atomic(str(file), envelope, prefix="tmp", suffix=".tmp")
        _prune(directory, keep=file)
    except (OSError, ValueError):  # ValueError: a value marshal cannot store (a bug, not fatal)
        pass  # a read-only tree still lints; it just is not cached


def _prune(directory: Path, keep: Path) -> None:
    cutoff = time.time() - PRUNE_AFTER_S
    stale_tmp = time.time() - STALE_TMP_S
    for entry in os.scandir(directory):
        if entry.path == str(keep):
            continue
        with contextlib.suppress(OSError):
            if entry.name.endswith(".tmp"):  # a run killed while writing its store
                if entry.stat().st_mtime < stale_tmp:
                    os.unlink(entry.path)
                continue
            if not entry.name.endswith((*STORE_SUFFIXES, ".json")):
                continue  # .json: the format before stores, never read again
            if entry.name.endswith(".json") or entry.stat().st_mtime < cutoff:
                os.unlink(entry.path)


def stamp(stat: os.stat_result) -> tuple[int, int, int, int]:
    return (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino)


def is_racy(stat: os.stat_result, trusted_before: int) -> bool:
    """Changed too close to the run's start for its stamp to prove a later edit would move it."""
    return max(stat.st_mtime_ns, stat.st_ctime_ns) >= trusted_before


class Cache:
    """Per file path: (content digest, diagnostics as JSON-ready dicts or None when the prefilter
    skipped the file, stat stamp or None when it was too recent to trust)."""

    def __init__(self, directory: Path, settings_key: str) -> None:
        self.directory = directory
        self.file = directory / f"{settings_key}.cache"
        self.dirty = False
        self.trusted_before = time.time_ns() - RACY_NS
        self.entries: dict[str, tuple] = read_store(self.file)  # none yet or damaged: afresh

    @staticmethod
    def _decode(items: object) -> Lookup:
        if items is None:
            return None
        from trio_lint.output.diagnostics import Diagnostic

        try:
            # A store written by another version may hold anything: a wrong shape is a miss.
            return [Diagnostic.from_json(item) for item in cast("list[Any]", items)]
        except (KeyError, ValueError, TypeError):
            return MISS

    def _entry(self, path: str) -> tuple | None:
        entry = self.entries.get(path)
        if type(entry) is not tuple or len(entry) != _ENTRY_LEN:
            return None
        return entry

    def by_stat(self, path: str, stat: os.stat_result) -> Lookup:
        """The cached result if the file's stat stamp is unchanged (and was trusted), else MISS.
        (Called for every file of a warm run, hence inlined.)"""
        entry = self.entries.get(path)
        if (
            type(entry) is not tuple
            or len(entry) != _ENTRY_LEN
            or entry[2] != (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino)
        ):
            return MISS
        return None if entry[1] is None else self._decode(entry[1])

    def by_digest(self, path: str, digest: str) -> Lookup:
        entry = self._entry(path)
        if entry is None or entry[0] != digest:
            return MISS
        return self._decode(entry[1])

    def put(self, path: str, digest: str, stat: os.stat_result, result: Cached) -> None:
        items = None if result is None else [d.to_json() for d in result]
        racy = is_racy(stat, self.trusted_before)
        self.entries[path] = (digest, items, None if racy else stamp(stat))
        self.dirty = True

    def save(self) -> None:
        if self.dirty:
            write_store(self.directory, self.file, self.entries)
