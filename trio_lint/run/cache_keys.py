"""What the per-file cache is keyed on: anything that could change a cached answer (the tool
version, the linter's own sources, the settings); and where a project's git root is."""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING

from trio_lint.run.digest import digest

if TYPE_CHECKING:
    from trio_lint.settings.config import LintConfig


def _engine_files() -> list[str]:
    """The linter's own sources and data: trio_lint's and pytrio_facts' .py and .json files."""
    # pytrio_facts ships beside trio_lint in the same distribution; it is found by path, not
    # imported (it imports a lot) nor looked up with importlib.util (a cost on every start).
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # trio_lint/
    files = []
    for base in (here, os.path.join(os.path.dirname(here), "pytrio_facts")):
        for directory, _, names in os.walk(base):
            files += [os.path.join(directory, n) for n in names if n.endswith((".py", ".json"))]
    return sorted(files)


def _memo_dir() -> str:
    from localfs.userdirs import app_dir

    return os.path.join(app_dir("cache", "trio-lint"), "code-fingerprints")


def content_fingerprint(files: list[str]) -> str:
    """A digest of the files' names (relative to the folder that holds them all) and bytes."""
    root = os.path.commonpath([os.path.dirname(path) for path in files]) if files else ""
    parts = []
    for path in files:
        with open(path, "rb") as handle:
            parts.append(f"{os.path.relpath(path, root)}:{digest(handle.read())}")
    return digest("\n".join(parts), 8)


@functools.cache
def code_fingerprint() -> str:
    """A digest of the contents of the linter's own sources: an edited rule invalidates the cache
    even when the version number did not move (an editable install during development), and a
    fresh clone or a reinstall of the same code keeps the cache valid (mtimes change, bytes do
    not). Reading ~1 MB on every start would cost more than the stat walk, so the content digest
    is remembered under the user's cache dir, keyed by the files' (path, mtime, size)."""
    files = _engine_files()
    stats = []
    for path in files:
        stat = os.stat(path)
        stats.append(f"{path}:{stat.st_mtime_ns}:{stat.st_size}")
    memo = os.path.join(_memo_dir(), digest("\n".join(stats), 16))
    try:
        with open(memo, encoding="ascii") as handle:
            known = handle.read().strip()
        if len(known) == 16 and all(c in "0123456789abcdef" for c in known):
            return known
    except OSError:
        pass
    fingerprint = content_fingerprint(files)
    try:  # the memo is an optimisation: an unwritable cache dir only costs the re-read
        from localfs.atomic import write_atomic

        os.makedirs(os.path.dirname(memo), exist_ok=True)
        write_atomic(
            memo, fingerprint.encode("ascii"), prefix=f"{os.path.basename(memo)}.", suffix=".tmp"
        )
    except OSError:
        pass
    return fingerprint


def settings_key(config: LintConfig, *, want_edits: bool) -> str:
    """What findings depend on besides the file: the tool version, the linter's own sources (which
    fix the rule registry) and the config (selection, target version, SDK modules...). Together
    they determine the selected rule set, so the rules need not be imported to name it."""
    from trio_lint.output.version import __version__

    parts = [__version__, code_fingerprint(), config.fingerprint(), str(want_edits)]
    return digest("|".join(parts), 10)


def git_root(directory: str) -> str | None:
    """The nearest directory at or above `directory` that holds `.git`, or None."""
    current = directory
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent
