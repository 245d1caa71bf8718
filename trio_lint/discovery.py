"""Which files to lint: walk the given paths, honour .gitignore files and the exclude patterns.

Explicitly named files are always linted (unless --force-exclude, for pre-commit); excludes and
.gitignore apply to what is found below a named directory. Paths are handled as strings: on a
tree the size of site-packages, pathlib objects cost more than everything else in a warm run."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

import pathspec

from trio_lint.config import LintConfig
from trio_lint.sources import SUFFIX_KINDS

LINTED_SUFFIXES = frozenset({*SUFFIX_KINDS, ".markdown"})


def _spec(lines: Iterable[str]) -> pathspec.PathSpec:
    return pathspec.GitIgnoreSpec.from_lines(list(lines))


def _git_root(start: str) -> str | None:
    directory = start
    while True:
        if os.path.exists(os.path.join(directory, ".git")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _read_gitignore(directory: str) -> pathspec.PathSpec | None:
    path = os.path.join(directory, ".gitignore")
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return _spec(handle.read().splitlines())
    except OSError:
        return None


def _relative(path: str, base: str) -> str | None:
    if path == base:
        return ""
    prefix = base.rstrip(os.sep) + os.sep
    return path[len(prefix) :].replace(os.sep, "/") if path.startswith(prefix) else None


def _ignored(ignores: list[tuple[str, pathspec.PathSpec]], path: str, suffix: str) -> bool:
    for base, spec in ignores:
        relative = _relative(path, base)
        if relative is not None and spec.match_file(relative + suffix):
            return True
    return False


def _linted(name: str) -> bool:
    dot = name.rfind(".")
    return dot > 0 and name[dot:].lower() in LINTED_SUFFIXES


class Walker:
    def __init__(self, config: LintConfig, root: Path) -> None:
        self.config = config
        self.root = os.path.realpath(root)
        self.excludes = _spec([*config.exclude, *config.extend_exclude])
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

    def _ancestor_ignores(self, directory: str) -> list[tuple[str, pathspec.PathSpec]]:
        git_root = _git_root(directory)
        if git_root is None:
            return []
        found = []
        current = directory
        while True:
            spec = _read_gitignore(current)
            if spec is not None:
                found.append((current, spec))
            if current == git_root or os.path.dirname(current) == current:
                break
            current = os.path.dirname(current)
        return found

    def walk(self, top: str) -> Iterator[str]:
        """os.walk's traversal (no symlinked directories entered, unreadable ones skipped) on
        os.scandir directly: entry types come from the listing (no stat per name), a directory's
        `.gitignore` is read only when its listing shows one, and name matches are memoized."""
        top = os.path.realpath(top)
        gitignore = self.config.respect_gitignore
        top_relative = _relative(top, self.root)
        excluded_name = self._excluded_name
        match_relative = self.excludes.match_file
        stack: list[tuple[str, list[tuple[str, pathspec.PathSpec]]]] = [
            (top, self._ancestor_ignores(top) if gitignore else [])
        ]
        while stack:
            directory, inherited = stack.pop()
            try:
                with os.scandir(directory) as listing:
                    entries = list(listing)
            except OSError:
                continue
            ignores = inherited
            if gitignore and directory != top and any(e.name == ".gitignore" for e in entries):
                spec = _read_gitignore(directory)
                if spec is not None:
                    ignores = [*inherited, (directory, spec)]
            relative_dir = None
            if top_relative is not None:
                below = _relative(directory, top)
                relative_dir = "/".join(p for p in (top_relative, below) if p)
            subdirs = []
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
                    path = entry.path
                    if ignores and _ignored(ignores, path, "/"):
                        continue
                    if not entry.is_symlink():
                        subdirs.append(path)
                    continue
                if not _linted(name) or excluded_name(name):
                    continue
                path = entry.path
                if ignores and _ignored(ignores, path, ""):
                    continue
                yield path
            stack.extend((path, ignores) for path in subdirs)


def discover(
    paths: list[str], config: LintConfig, root: Path, *, force_exclude: bool = False
) -> list[str]:
    """Absolute paths to lint, sorted and unique. Missing paths raise FileNotFoundError."""
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
    return sorted(found)
