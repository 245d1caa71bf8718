"""What the per-file cache is keyed on: anything that could change a cached answer (the tool
version, the linter's own sources, the settings); and where a project's git root is."""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING

from trio_lint.digest import digest

if TYPE_CHECKING:
    from trio_lint.config import LintConfig


@functools.cache
def code_fingerprint() -> str:
    """(path, mtime, size) of the linter's own sources: an edited rule invalidates the cache even
    when the version number did not move (an editable install during development)."""
    # pytrio_facts ships beside trio_lint in the same distribution; it is found by path, not
    # imported (it imports a lot) nor looked up with importlib.util (a cost on every start).
    here = os.path.dirname(os.path.abspath(__file__))
    parts = []
    for base in (here, os.path.join(os.path.dirname(here), "pytrio_facts")):
        for directory, _, names in os.walk(base):
            for name in names:
                if name.endswith((".py", ".json")):
                    stat = os.stat(os.path.join(directory, name))
                    parts.append(f"{directory}/{name}:{stat.st_mtime_ns}:{stat.st_size}")
    return digest("\n".join(sorted(parts)), 8)


def settings_key(config: LintConfig, *, want_edits: bool) -> str:
    """What findings depend on besides the file: the tool version, the linter's own sources (which
    fix the rule registry) and the config (selection, target version, SDK modules...). Together
    they determine the selected rule set, so the rules need not be imported to name it."""
    from trio_lint import __version__

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
