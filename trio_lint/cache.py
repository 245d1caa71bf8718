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

import functools
import gc
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


# A directory's stamp: its listing changes move mtime/ctime; a replaced directory changes inode.
def dir_stamp(stat: os.stat_result) -> list[int]:
    return [stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino]


# Stamps this close to the run's start are not trusted next time (covers 2 s FAT/SMB ticks).
RACY_NS = 3_000_000_000
_ENTRY_LEN = 3  # [digest, diagnostics as JSON (or None), stamp (or None)]


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@functools.cache
def code_fingerprint() -> str:
    """(path, mtime, size) of the linter's own sources: an edited rule invalidates the cache even
    when the version number did not move (an editable install during development)."""
    import importlib.util

    parts = []
    for package in ("trio_lint", "pytrio_facts"):
        # find_spec names the directory without running the package (pytrio_facts imports a lot)
        spec = importlib.util.find_spec(package)
        base = os.path.dirname((spec and spec.origin) or "")
        for directory, _, names in os.walk(base):
            for name in names:
                if name.endswith(".py"):
                    stat = os.stat(os.path.join(directory, name))
                    parts.append(f"{directory}/{name}:{stat.st_mtime_ns}:{stat.st_size}")
    return hashlib.sha256("\n".join(sorted(parts)).encode()).hexdigest()[:16]


def _load_json(file: Path) -> dict:
    """The JSON object in `file`, or {} when it is missing or damaged in any way."""
    try:
        raw = file.read_bytes()
    except OSError:
        return {}
    # Decoding creates ~100k lists on a large tree, none of them cyclic: the collector's passes
    # over them are pure cost.
    enabled = gc.isenabled()
    gc.disable()
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return {}
    finally:
        if enabled:
            gc.enable()
    return data if isinstance(data, dict) else {}


def _save_json(directory: Path, file: Path, data: object) -> None:
    """Temp file + rename: a crash or a concurrent run never leaves a half-written cache."""
    tmp = None
    try:
        directory.mkdir(parents=True, exist_ok=True)
        marker = directory / ".gitignore"
        if not marker.exists():
            marker.write_text("# Automatically created by trio-lint.\n*\n", encoding="utf-8")
        fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, separators=(",", ":"))
        Path(tmp).replace(file)
        tmp = None
    except OSError:
        pass  # a read-only tree still lints; it just is not cached
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def stamp(stat: os.stat_result) -> list[int]:
    return [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino]


class Cache:
    def __init__(self, directory: Path, settings_key: str) -> None:
        self.directory = directory
        self.file = directory / f"{settings_key}.json"
        self.entries: dict[str, list] = {}
        self.dirty = False
        self.trusted_before = time.time_ns() - RACY_NS
        self.entries = _load_json(self.file)  # no cache yet, or a damaged one: start afresh

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
        """The cached result if the file's stat stamp is unchanged (and was trusted), else MISS.
        (Called for every file of a warm run, hence inlined.)"""
        entry = self.entries.get(path)
        if (
            type(entry) is not list
            or len(entry) != _ENTRY_LEN
            or entry[2] != [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino]
        ):
            return MISS
        return None if entry[1] is None else self._decode(entry[1])

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
        if self.dirty:
            _save_json(self.directory, self.file, self.entries)


class WalkIndex:
    """What the last walk found in each directory: [stamp, .gitignore digest or None, linted file
    names, subdirectory names], per walked top, in one JSON file per walk settings. A directory's
    mtime/ctime move whenever an entry is added, removed or renamed in it, so an unchanged stamp
    means an unchanged listing; `.gitignore` contents are checked by digest (edited in place,
    they do not move the directory's stamp). Directories holding symlinks are never indexed (a
    link's target can change kind without its directory changing) and racy stamps are not
    trusted, as for files."""

    def __init__(self, directory: Path, settings_key: str) -> None:
        self.directory = directory
        self.file = directory / f"walk-{settings_key}.index"  # JSON; not *.json, the results
        self.trusted_before = time.time_ns() - RACY_NS
        self.old = _load_json(self.file)
        self.new: dict[str, dict] = {}
        self.dirty = False

    def start(self, top: str, signature: str) -> dict[str, list]:
        """The directories known below `top`, if its ancestors' ignore files are unchanged."""
        self.new[top] = {"ancestors": signature, "dirs": {}}
        old = self.old.get(top)
        if type(old) is dict and old.get("ancestors") == signature and type(old["dirs"]) is dict:
            return old["dirs"]
        self.dirty = True
        return {}

    @staticmethod
    def usable(entry: object) -> bool:
        return (
            type(entry) is list
            and len(entry) == 4
            and type(entry[2]) is list
            and type(entry[3]) is list
        )

    def keep(self, top: str, directory: str, entry: list) -> None:
        self.new[top]["dirs"][directory] = entry

    def record(self, top: str, directory: str, entry: list) -> None:
        self.dirty = True
        mtime_ns, ctime_ns, _ = entry[0]
        if max(mtime_ns, ctime_ns) < self.trusted_before:
            self.new[top]["dirs"][directory] = entry

    def discard(self) -> None:
        self.old = {}
        self.new = {}
        self.dirty = True

    def save(self) -> None:
        if self.dirty or self.new.keys() != self.old.keys():
            _save_json(self.directory, self.file, self.new)
