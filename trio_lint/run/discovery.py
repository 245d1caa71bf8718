"""Which files to lint: walk the given paths, honour .gitignore files and the exclude patterns.

Explicitly named files are always linted (unless --force-exclude, for pre-commit); excludes and
.gitignore apply to what is found below a named directory. Only regular files are listed: no
symlinked directory is entered (so no cycle can be walked), dangling or looping links and FIFOs,
sockets and devices are passed over, and a file reached both directly and through a symlink is
linted once. A directory that cannot be listed is reported, not skipped in silence. Paths are
handled as strings: on a tree the size of site-packages, pathlib objects cost more than
everything else in a warm run."""

from __future__ import annotations

import errno
import functools
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from trio_lint.run.cache_keys import git_root
from trio_lint.run.fileio import check_regular, is_temp_name, read_regular
from trio_lint.settings.config import LintConfig
from trio_lint.sources import SUFFIX_KINDS

if TYPE_CHECKING:
    import pathspec

LINTED_SUFFIXES = frozenset({*SUFFIX_KINDS, ".markdown"})


class Patterns:
    """Gitignore-style patterns, compiled on first use: a tree without ignore patterns never
    imports pathspec (a tenth of a warm run's cost)."""

    __slots__ = ("_lines", "_spec")

    def __init__(self, lines: Iterable[str]) -> None:
        self._lines = list(lines)
        self._spec: pathspec.GitIgnoreSpec | None = None

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
        self.errors: list[tuple[str, str]] = []  # (path, why) of what could not be read
        self.links: list[str] = []  # file symlinks found (deduplicated against their targets)
        self.temps: list[str] = []  # names a --fix write may have left behind (if killed)
        self._visited: set[str] = set()  # directories listed (real paths)

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
            # Not a regular file (a directory named .gitignore, as git sees it): no patterns.
            return read_regular(path).decode("utf-8", "replace")
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
        visited = self._visited
        while stack:
            directory, inherited = stack.pop()
            if directory in visited:
                continue  # named twice (`trio-lint a a/b`)
            visited.add(directory)
            ignores = inherited
            try:
                with os.scandir(directory) as listing:
                    entries = list(listing)
            except FileNotFoundError:
                continue  # removed since its parent was listed
            except OSError as exc:
                self.errors.append((directory, f"cannot read the directory: {exc.strerror or exc}"))
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
                if not _linted(name, markdown):
                    if is_temp_name(name):
                        self.temps.append(entry.path)
                    continue
                if excluded_name(name):
                    continue
                if relative_dir is not None:
                    candidate = f"{relative_dir}/{name}" if relative_dir else name
                    if match_relative(candidate):
                        continue
                if ignores and _ignored(ignores, entry.path, ""):
                    continue
                try:
                    # From the listing's entry type, no stat, except for a symlink (followed).
                    regular = entry.is_file()
                    link = regular and entry.is_symlink()
                except OSError:
                    continue
                if not regular:
                    continue  # a dangling or looping link, a FIFO, socket or device
                if link:
                    self.links.append(entry.path)
                else:
                    files.append(name)
            prefix = _prefix(directory)
            found += [prefix + name for name in files]
            stack += [(prefix + name, ignores) for name in subdirs]
        return found


@dataclass(frozen=True)
class Discovery:
    """The files to lint (absolute, sorted, unique by real path), what could not be read
    ((path, why), reported as PTR901), and the temp files a killed --fix run may have left."""

    files: list[str]
    errors: list[tuple[str, str]] = field(default_factory=list)
    temps: list[str] = field(default_factory=list)


def _named_file(raw: str) -> str | None:
    """Why a path named on the command line cannot be linted (None: it can)."""
    try:
        st = os.stat(raw)
    except OSError as exc:
        if os.path.islink(raw):
            if exc.errno == errno.ENOENT:
                return "a symbolic link to a file that does not exist; skipped"
            return f"cannot follow the symbolic link: {exc.strerror or exc}; skipped"
        return f"cannot read the file: {exc.strerror or exc}"
    try:
        check_regular(raw, st, limit=sys.maxsize)  # the size is the read's to check
    except OSError as exc:
        return str(exc.strerror)
    return None


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
    errors: list[tuple[str, str]] = walker.errors
    for raw in paths:
        if os.path.isdir(raw):
            found.update(walker.walk(raw))
        elif os.path.lexists(raw):
            if force_exclude and walker.excluded(raw, is_dir=False):
                continue
            why = _named_file(raw)
            if why is None:
                found.add(os.path.realpath(raw))
            else:
                errors.append((os.path.abspath(raw), why))
        else:
            raise FileNotFoundError(raw)
    # A symlinked file is linted under its own name unless its target is linted already (a fix
    # would otherwise be computed twice from the same bytes, and the second write refused).
    targets: set[str] = set()
    for link in sorted(walker.links):
        target = os.path.realpath(link)
        if target not in found and target not in targets:
            targets.add(target)
            found.add(link)
    return Discovery(sorted(found), errors, walker.temps)
