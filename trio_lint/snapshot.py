"""The run snapshot: a whole run's answer, kept with the stamp of everything that decided it.

A run over a tree reads its directories (listings, .gitignore files up to the git root) and its
files; the per-file cache and the walk index then make each of those cheap. On a large tree that
nobody touched, even cheap is one lookup, one comparison and one method call per file on top of
the stat. So a run that saw everything it needed (no unreadable file, no internal error, no stamp
inside the racy window) also stores, per (settings, paths, working directory, git roots: see
cache_keys.snapshot_key), the list of every path it looked at, their stamps taken *before* it
read them, packed into one bytes string, and its diagnostics. The next run stats that list and
compares one bytes string: equal means every directory listing, ignore file and source is as it
was, so the answer is too. Anything else falls back to the walk index and the per-file cache,
which still spare the unchanged part of the tree. Stamps are the per-file cache's (size,
mtime_ns, ctime_ns, inode), with the same racy-timestamp rule, so the snapshot is exactly as
safe as that cache."""

from __future__ import annotations

import os
import struct
import time
from typing import TYPE_CHECKING

from trio_lint.cache import RACY_NS, is_racy, read_store, write_store

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from pathlib import Path

    from trio_lint.diagnostics import Diagnostic

_PACK = struct.Struct("<qqqQ").pack  # size, mtime_ns, ctime_ns, inode


def _packed(stats: Iterable[os.stat_result]) -> bytes:
    """The stamps of `stats` (cache.stamp's fields) as one bytes string, compared in one go."""
    return b"".join([_PACK(s.st_size, s.st_mtime_ns, s.st_ctime_ns, s.st_ino) for s in stats])


class Snapshot:
    def __init__(self, directory: Path, key: str) -> None:
        self.directory = directory
        self.file = directory / f"run-{key}.cache"
        self.started = time.time_ns()

    def answer(self) -> list[Diagnostic] | None:
        """The stored diagnostics if every stamped path is unchanged, else None."""
        data = read_store(self.file)
        paths, stamps, items = data.get("paths"), data.get("stamps"), data.get("diagnostics")
        if type(paths) is not list or type(stamps) is not bytes or type(items) is not list:
            return None
        if not all(type(path) is str for path in paths):  # os.stat would take an int as an fd
            return None
        try:
            current = _packed(map(os.stat, paths))
        except (OSError, TypeError, ValueError):  # gone, unreadable, or a damaged path entry
            return None
        if current != stamps:
            return None
        from trio_lint.diagnostics import Diagnostic

        try:
            return [Diagnostic.from_json(item) for item in items]
        except (KeyError, ValueError, TypeError):
            return None

    def save(
        self, stamped: Sequence[tuple[str, os.stat_result]], diagnostics: Sequence[Diagnostic]
    ) -> bool:
        """Store the run unless a stamp is too recent to trust (see cache.RACY_NS); True if
        stored."""
        trusted_before = self.started - RACY_NS
        if any(is_racy(stat, trusted_before) for _, stat in stamped):
            return False
        data = {
            "paths": [path for path, _ in stamped],
            "stamps": _packed(stat for _, stat in stamped),
            "diagnostics": [d.to_json() for d in diagnostics],
        }
        write_store(self.directory, self.file, data)
        return True
