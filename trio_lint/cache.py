"""Content-hash cache: a file whose bytes, config, rule set and tool version are unchanged is not
parsed again. One JSON file per settings key, written atomically; a damaged cache is ignored.

Entries are keyed on the file's content hash; an unchanged (mtime, size) lets a warm run trust
the stored hash without reading the file again (as ruff and mypy do), so a warm run over a large
tree costs a directory walk and a stat per file."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from trio_lint.diagnostics import Diagnostic

# A cached result: the diagnostics, or None when the prefilter skipped the file.
Cached = list[Diagnostic] | None
_MISS = object()


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class Cache:
    def __init__(self, directory: Path, settings_key: str) -> None:
        self.directory = directory
        self.file = directory / f"{settings_key}.json"
        self.entries: dict[str, list] = {}
        self.dirty = False
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
            if isinstance(data, dict):
                self.entries = data
        except (OSError, ValueError):
            self.entries = {}

    @staticmethod
    def _decode(items: list | None) -> Cached | object:
        if items is None:
            return None
        try:
            return [Diagnostic.model_validate(item) for item in items]
        except (ValueError, TypeError):
            return _MISS

    def by_stat(self, path: str, stat: os.stat_result) -> Cached | object:
        """The cached result if the file's mtime and size are unchanged, else `MISS`."""
        entry = self.entries.get(path)
        if not entry or len(entry) != 4 or entry[2] != stat.st_mtime_ns or entry[3] != stat.st_size:
            return _MISS
        return self._decode(entry[1])

    def by_digest(self, path: str, digest: str) -> Cached | object:
        entry = self.entries.get(path)
        if not entry or entry[0] != digest:
            return _MISS
        return self._decode(entry[1])

    def put(self, path: str, digest: str, stat: os.stat_result, result: Cached) -> None:
        items = None if result is None else [d.model_dump(mode="json") for d in result]
        self.entries[path] = [digest, items, stat.st_mtime_ns, stat.st_size]
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            marker = self.directory / ".gitignore"
            if not marker.exists():
                marker.write_text("# Automatically created by trio-lint.\n*\n", encoding="utf-8")
            fd, tmp = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(self.entries, handle, separators=(",", ":"))
            Path(tmp).replace(self.file)
        except OSError:
            pass  # a read-only tree still lints; it just is not cached


MISS = _MISS
