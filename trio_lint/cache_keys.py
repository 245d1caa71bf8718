"""What each cache is keyed on. A key changes whenever anything that could change the cached
answer changes: the tool version, the linter's own sources, the settings, and for the walk and
the run snapshot, the project root, the paths and the working directory."""

from __future__ import annotations

import functools
import json
import os
from typing import TYPE_CHECKING

from trio_lint.digest import digest

if TYPE_CHECKING:
    from pathlib import Path

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


def walk_settings_key(config: LintConfig, root: Path) -> str:
    """Everything a directory's walk result depends on besides the directory itself."""
    from trio_lint import __version__

    parts = [
        __version__,
        code_fingerprint(),
        os.path.realpath(root),
        json.dumps(
            [config.exclude, config.extend_exclude, config.respect_gitignore, config.markdown]
        ),
    ]
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


def snapshot_key(
    config: LintConfig, root: Path, paths: list[str], *, want_edits: bool, force_exclude: bool
) -> str:
    """A run's: its findings' settings, its walk's settings, the paths as given, the working
    directory (which decides the paths shown) and the git root above each directory, which
    decides the .gitignore files that apply. (Looking the git root up costs a stat per level;
    stamping every level instead would tie the snapshot to directories such as /tmp or $HOME,
    which change all the time, whenever the tree is not in a repository.)"""
    roots = []
    if config.respect_gitignore:
        for path in paths:
            if os.path.isdir(path):
                roots.append(f"git root: {git_root(os.path.realpath(path))}")
    parts = [
        settings_key(config, want_edits=want_edits),
        walk_settings_key(config, root),
        os.getcwd(),
        "force-exclude" if force_exclude else "",
        *paths,
        *roots,
    ]
    return digest("\0".join(parts), 10)
