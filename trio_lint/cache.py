"""Content-hash cache: a file whose bytes, config, rule set and tool version are unchanged is not
parsed again. One JSON file per settings key, written atomically; a damaged cache is ignored."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from trio_lint.diagnostics import Diagnostic


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

    def get(self, path: str, digest: str) -> list[Diagnostic] | None:
        entry = self.entries.get(path)
        if not entry or entry[0] != digest:
            return None
        try:
            return [Diagnostic.model_validate(item) for item in entry[1]]
        except (ValueError, TypeError):
            return None

    def put(self, path: str, digest: str, diagnostics: list[Diagnostic]) -> None:
        self.entries[path] = [digest, [d.model_dump(mode="json") for d in diagnostics]]
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
