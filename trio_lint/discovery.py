"""Which files to lint: walk the given paths, honour .gitignore files and the exclude patterns.

Explicitly named files are always linted (unless --force-exclude, for pre-commit); excludes and
.gitignore apply to what is found below a named directory."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import pathspec

from trio_lint.config import LintConfig
from trio_lint.sources import kind_of

LINTED_KINDS = {"python", "notebook", "markdown"}


def _spec(lines: Iterable[str]) -> pathspec.PathSpec:
    return pathspec.GitIgnoreSpec.from_lines(list(lines))


def _git_root(start: Path) -> Path | None:
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return None


def _read_gitignore(directory: Path) -> pathspec.PathSpec | None:
    path = directory / ".gitignore"
    try:
        return _spec(path.read_text(encoding="utf-8", errors="replace").splitlines())
    except OSError:
        return None


class Walker:
    def __init__(self, config: LintConfig, root: Path) -> None:
        self.config = config
        self.root = root
        self.excludes = _spec([*config.exclude, *config.extend_exclude])

    def excluded(self, path: Path) -> bool:
        try:
            relative = path.resolve().relative_to(self.root.resolve())
        except ValueError:
            relative = Path(path.name)
        text = relative.as_posix() + ("/" if path.is_dir() else "")
        return self.excludes.match_file(text) or self.excludes.match_file(path.name)

    def _ancestor_ignores(self, directory: Path) -> list[tuple[Path, pathspec.PathSpec]]:
        if not self.config.respect_gitignore:
            return []
        git_root = _git_root(directory)
        if git_root is None:
            return []
        found = []
        for parent in (directory, *directory.parents):
            spec = _read_gitignore(parent)
            if spec is not None:
                found.append((parent, spec))
            if parent == git_root:
                break
        return found

    def walk(self, top: Path) -> Iterable[Path]:
        top = top.resolve()
        ignores = self._ancestor_ignores(top)

        def ignored(path: Path, is_dir: bool) -> bool:
            for base, spec in ignores:
                try:
                    relative = path.relative_to(base).as_posix()
                except ValueError:
                    continue
                if spec.match_file(relative + ("/" if is_dir else "")):
                    return True
            return False

        for directory, dirnames, filenames in os.walk(top):
            current = Path(directory)
            if self.config.respect_gitignore and current != top:
                spec = _read_gitignore(current)
                if spec is not None:
                    ignores.append((current, spec))
            keep = []
            for name in sorted(dirnames):
                child = current / name
                if self.excludes.match_file(name + "/") or self.excluded(child):
                    continue
                if ignored(child, True):
                    continue
                keep.append(name)
            dirnames[:] = keep
            for name in sorted(filenames):
                if kind_of(name) not in LINTED_KINDS:
                    continue
                child = current / name
                if self.excludes.match_file(name) or ignored(child, False):
                    continue
                yield child


def discover(
    paths: list[str], config: LintConfig, root: Path, *, force_exclude: bool = False
) -> list[Path]:
    """Files to lint, sorted and unique. Missing paths raise FileNotFoundError (a usage error)."""
    walker = Walker(config, root)
    found: dict[str, Path] = {}
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for child in walker.walk(path):
                found.setdefault(str(child), child)
        elif path.exists():
            if force_exclude and walker.excluded(path):
                continue
            found.setdefault(str(path.resolve()), path.resolve())
        else:
            raise FileNotFoundError(raw)
    return sorted(found.values())
