"""Which files to lint: walk the given paths, honour .gitignore files and the exclude patterns.

Explicitly named files are always linted (unless --force-exclude, for pre-commit); excludes and
.gitignore apply to what is found below a named directory. Paths are handled as strings: on a
tree the size of site-packages, pathlib objects cost more than everything else in a warm run."""

from __future__ import annotations

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


def _linted(name: str) -> bool:
    dot = name.rfind(".")
    return dot > 0 and name[dot:].lower() in LINTED_SUFFIXES


class Walker:
    def __init__(self, config: LintConfig, root: Path) -> None:
        self.config = config
        self.root = os.path.realpath(root)
        self.excludes = _spec([*config.exclude, *config.extend_exclude])

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
        top = os.path.realpath(top)
        gitignore = self.config.respect_gitignore
        ignores = self._ancestor_ignores(top) if gitignore else []
        top_relative = _relative(top, self.root)

        def ignored(path: str, suffix: str) -> bool:
            for base, spec in ignores:
                relative = _relative(path, base)
                if relative is not None and spec.match_file(relative + suffix):
                    return True
            return False

        for directory, dirnames, filenames in os.walk(top):
            if gitignore and directory != top:
                spec = _read_gitignore(directory)
                if spec is not None:
                    ignores.append((directory, spec))
            below = _relative(directory, top)
            relative_dir = None
            if top_relative is not None:
                relative_dir = "/".join(p for p in (top_relative, below) if p)
            keep = []
            for name in sorted(dirnames):
                if self.excludes.match_file(name + "/"):
                    continue
                if relative_dir is not None:
                    candidate = f"{relative_dir}/{name}/" if relative_dir else f"{name}/"
                    if self.excludes.match_file(candidate):
                        continue
                if ignores and ignored(os.path.join(directory, name), "/"):
                    continue
                keep.append(name)
            dirnames[:] = keep
            for name in sorted(filenames):
                if not _linted(name) or self.excludes.match_file(name):
                    continue
                path = os.path.join(directory, name)
                if ignores and ignored(path, ""):
                    continue
                yield path


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
