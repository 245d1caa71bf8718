"""Which files to lint: walk the given paths, honour .gitignore files and the exclude patterns.

Explicitly named files are always linted (unless --force-exclude, for pre-commit); excludes and
.gitignore apply to what is found below a named directory. Paths are handled as strings: on a
tree the size of site-packages, pathlib objects cost more than everything else in a warm run."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG

from trio_lint.cache_keys import git_root
from trio_lint.config import LintConfig
from trio_lint.sources import SUFFIX_KINDS

LINTED_SUFFIXES = frozenset({*SUFFIX_KINDS, ".markdown"})


class Patterns:
    """Gitignore-style patterns, compiled on first use: a tree without ignore patterns never
    imports pathspec (a tenth of a warm run's cost)."""

    __slots__ = ("_lines", "_spec")

    def __init__(self, lines: Iterable[str]) -> None:
        self._lines = list(lines)
        self._spec = None

    def match_file(self, path: str) -> bool:
        if self._spec is None:
            import pathspec

            self._spec = pathspec.GitIgnoreSpec.from_lines(self._lines)
        return self._spec.match_file(path)


def _relative(path: str, base: str) -> str | None:
    if path == base:
        return ""
    prefix = base.rstrip(os.sep) + os.sep
    return path[len(prefix) :].replace(os.sep, "/") if path.startswith(prefix) else None


def _ignored(ignores: list[tuple[str, Patterns]], path: str, suffix: str) -> bool:
    for base, spec in ignores:
        relative = _relative(path, base)
        if relative is not None and spec.match_file(relative + suffix):
            return True
    return False


def _prefix(directory: str) -> str:
    """What os.path.join(directory, name) puts before a plain name (a concatenation is cheaper)."""
    return directory if directory.endswith(os.sep) else directory + os.sep


_MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})


def _linted(name: str, markdown: bool) -> bool:
    dot = name.rfind(".")
    if dot <= 0:
        return False
    suffix = name[dot:].lower()
    return suffix in LINTED_SUFFIXES and (markdown or suffix not in _MARKDOWN_SUFFIXES)


class Walker:
    def __init__(self, config: LintConfig, root: Path) -> None:
        self.config = config
        self.root = os.path.realpath(root)
        self.excludes = Patterns([*config.exclude, *config.extend_exclude])
        # A pure function of the name, asked once per file and directory name of the tree.
        self._excluded_name = functools.lru_cache(maxsize=None)(self.excludes.match_file)

    def excluded(self, path: str, *, is_dir: bool) -> bool:
        """Matched by an exclude pattern, relative to the project root (or by its name alone)."""
        name = os.path.basename(path.rstrip(os.sep))
        suffix = "/" if is_dir else ""
        if self.excludes.match_file(name + suffix):
            return True
        relative = _relative(os.path.realpath(path), self.root)
        return relative is not None and self.excludes.match_file(relative + suffix)

    def _read_ignore(self, path: str) -> str | None:
        """The text of the .gitignore at `path` (None if there is no such file)."""
        try:
            stat = os.stat(path)
        except OSError:
            return None
        if not S_ISREG(stat.st_mode):
            return None  # a directory named .gitignore, as git sees it: no patterns
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                return handle.read()
        except OSError:
            return None

    def _ancestor_ignores(self, directory: str) -> list[tuple[str, Patterns]]:
        """The .gitignore files from `directory` up to its git root (none outside a repository)."""
        root = git_root(directory)
        if root is None:
            return []
        found = []
        current = directory
        while True:
            text = self._read_ignore(os.path.join(current, ".gitignore"))
            if text is not None:
                found.append((current, Patterns(text.splitlines())))
            if current == root:
                return found
            current = os.path.dirname(current)

    def walk(self, top: str) -> list[str]:
        """os.walk's traversal (no symlinked directories entered, unreadable ones skipped) on
        os.scandir directly: entry types come from the listing (no stat per name), a directory's
        `.gitignore` is read only when its listing shows one, and name matches are memoized.
        (A list, not a generator: on a warm run a yield per file is a tenth of the cost.)"""
        top = os.path.realpath(top)
        gitignore = self.config.respect_gitignore
        markdown = self.config.markdown
        top_relative = _relative(top, self.root)
        excluded_name = self._excluded_name
        match_relative = self.excludes.match_file
        ancestors = self._ancestor_ignores(top) if gitignore else []
        found: list[str] = []
        stack: list[tuple[str, list[tuple[str, Patterns]]]] = [(top, ancestors)]
        while stack:
            directory, inherited = stack.pop()
            ignores = inherited
            try:
                with os.scandir(directory) as listing:
                    entries = list(listing)
            except OSError:
                continue
            if gitignore and directory != top and any(e.name == ".gitignore" for e in entries):
                text = self._read_ignore(os.path.join(directory, ".gitignore"))
                if text is not None:
                    ignores = [*inherited, (directory, Patterns(text.splitlines()))]
            relative_dir = None
            if top_relative is not None:
                below = _relative(directory, top)
                relative_dir = "/".join(p for p in (top_relative, below) if p)
            subdirs: list[str] = []
            files: list[str] = []
            for entry in entries:
                name = entry.name
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                if is_dir:
                    if excluded_name(name + "/"):
                        continue
                    if relative_dir is not None:
                        candidate = f"{relative_dir}/{name}/" if relative_dir else f"{name}/"
                        if match_relative(candidate):
                            continue
                    if ignores and _ignored(ignores, entry.path, "/"):
                        continue
                    if not entry.is_symlink():
                        subdirs.append(name)
                    continue
                if not _linted(name, markdown) or excluded_name(name):
                    continue
                if relative_dir is not None:
                    candidate = f"{relative_dir}/{name}" if relative_dir else name
                    if match_relative(candidate):
                        continue
                if ignores and _ignored(ignores, entry.path, ""):
                    continue
                files.append(name)
            prefix = _prefix(directory)
            found += [prefix + name for name in files]
            stack += [(prefix + name, ignores) for name in subdirs]
        return found


@dataclass(frozen=True)
class Discovery:
    """The files to lint (absolute, sorted, unique)."""

    files: list[str]


def discover(
    paths: list[str],
    config: LintConfig,
    root: Path,
    *,
    force_exclude: bool = False,
) -> Discovery:
    """The files to lint below `paths`. Missing paths raise FileNotFoundError."""
    walker = Walker(config, root)
    found: set[str] = set()
    for raw in paths:
        if os.path.isdir(raw):
            found.update(walker.walk(raw))
        elif os.path.exists(raw):
            if force_exclude and walker.excluded(raw, is_dir=False):
                continue
            found.add(os.path.realpath(raw))
        else:
            raise FileNotFoundError(raw)
    return Discovery(sorted(found))
