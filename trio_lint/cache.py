"""Content-hash cache: a file whose bytes, config, rule set and tool version are unchanged is not
parsed again. One JSON file per settings key (a single file for the whole tree, not one per
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

import hashlib
import json
import os
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trio_lint.diagnostics import Diagnostic

    # A cached result: the diagnostics, or None when the prefilter skipped the file.
    Cached = list[Diagnostic] | None

MISS = object()
# Stamps this close to the run's start are not trusted next time (covers 2 s FAT/SMB ticks).
RACY_NS = 3_000_000_000
_ENTRY_LEN = 3  # [digest, diagnostics as JSON (or None), stamp (or None)]


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def stamp(stat: os.stat_result) -> list[int]:
    return [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino]


class Cache:
    def __init__(self, directory: Path, settings_key: str) -> None:
        self.directory = directory
        self.file = directory / f"{settings_key}.json"
        self.entries: dict[str, list] = {}
        self.dirty = False
        self.trusted_before = time.time_ns() - RACY_NS
        try:
            data = json.loads(self.file.read_bytes())
            if isinstance(data, dict):
                self.entries = data
        except (OSError, ValueError, RecursionError):
            self.entries = {}  # no cache yet, or a damaged one: start afresh

    @staticmethod
    def _decode(items: object) -> Cached | object:
        if items is None:
            return None
        from trio_lint.diagnostics import Diagnostic

        try:
            return [Diagnostic.model_validate(item) for item in items]  # type: ignore[union-attr]
        except (ValueError, TypeError):
            return MISS

    def _entry(self, path: str) -> list | None:
        entry = self.entries.get(path)
        if type(entry) is not list or len(entry) != _ENTRY_LEN:
            return None
        return entry

    def by_stat(self, path: str, stat: os.stat_result) -> Cached | object:
        """The cached result if the file's stat stamp is unchanged (and was trusted), else MISS."""
        entry = self._entry(path)
        if entry is None or entry[2] is None or entry[2] != stamp(stat):
            return MISS
        return self._decode(entry[1])

    def by_digest(self, path: str, digest: str) -> Cached | object:
        entry = self._entry(path)
        if entry is None or entry[0] != digest:
            return MISS
        return self._decode(entry[1])

    def put(self, path: str, digest: str, stat: os.stat_result, result: Cached) -> None:
        items = None if result is None else [d.model_dump(mode="json") for d in result]
        recent = max(stat.st_mtime_ns, stat.st_ctime_ns) >= self.trusted_before
        self.entries[path] = [digest, items, None if recent else stamp(stat)]
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        tmp = None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            marker = self.directory / ".gitignore"
            if not marker.exists():
                marker.write_text("# Automatically created by trio-lint.\n*\n", encoding="utf-8")
            fd, tmp = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(self.entries, handle, separators=(",", ":"))
            Path(tmp).replace(self.file)
            tmp = None
        except OSError:
            pass  # a read-only tree still lints; it just is not cached
        finally:
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)
