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

from trio_lint.cache import WalkIndex
from trio_lint.cache_keys import git_root, walk_settings_key
from trio_lint.config import LintConfig
from trio_lint.digest import digest
from trio_lint.sources import SUFFIX_KINDS

LINTED_SUFFIXES = frozenset({*SUFFIX_KINDS, ".markdown"})


class Patterns:
    """Gitignore-style patterns, compiled on first use: a warm run answered by the walk index
    never matches a name, and so never imports pathspec (a tenth of the run's cost)."""

    __slots__ = ("_lines", "_spec")

    def __init__(self, lines: Iterable[str]) -> None:
        self._lines = list(lines)
        self._spec = None

    def match_file(self, path: str) -> bool:
        if self._spec is None:
            import pathspec

            self._spec = pathspec.GitIgnoreSpec.from_lines(self._lines)
        return self._spec.match_file(path)


def _digest(text: str) -> str:
    return digest(text, 12)


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
        # Every directory and ignore file the walk consulted, stamped before it was read (for
        # the run snapshot); `complete` turns False when one could not be stamped.
        self.stamped: list[tuple[str, os.stat_result]] = []
        self.complete = True
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
        """The text of the .gitignore at `path` (None if there is no such file), stamped first."""
        try:
            stat = os.stat(path)
        except OSError:
            return None  # none here: creating one moves its directory's stamp
        if not S_ISREG(stat.st_mode):
            return None  # a directory named .gitignore, as git sees it: no patterns
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        except OSError:
            self.complete = False
            return None
        self.stamped.append((path, stat))
        return text

    def _ancestor_ignores(self, directory: str) -> list[tuple[str, Patterns, str]]:
        """The .gitignore files from `directory` up to its git root (none outside a repository).
        Every directory on the way is stamped: a `.gitignore` created in one of them moves its
        stamp. (Which directory is the git root is part of the run snapshot's key.)"""
        root = git_root(directory)
        if root is None:
            return []
        found = []
        current = directory
        while True:
            try:
                self.stamped.append((current, os.stat(current)))
            except OSError:
                self.complete = False
            text = self._read_ignore(os.path.join(current, ".gitignore"))
            if text is not None:
                found.append((current, Patterns(text.splitlines()), _digest(text)))
            if current == root:
                return found
            current = os.path.dirname(current)

    def walk(self, top: str, index: WalkIndex | None = None) -> list[str]:
        """os.walk's traversal (no symlinked directories entered, unreadable ones skipped) on
        os.scandir directly: entry types come from the listing (no stat per name), a directory's
        `.gitignore` is read only when its listing shows one, and name matches are memoized.
        With an index, a directory whose stamp (and `.gitignore`) is unchanged since the last
        walk is not listed again: its linted files and subdirectories come from the index.
        (A list, not a generator: on a warm run a yield per file is a tenth of the cost.)"""
        top = os.path.realpath(top)
        gitignore = self.config.respect_gitignore
        markdown = self.config.markdown
        top_relative = _relative(top, self.root)
        excluded_name = self._excluded_name
        match_relative = self.excludes.match_file
        ancestors = self._ancestor_ignores(top) if gitignore else []
        known = None
        kept: dict[str, list] = {}
        if index is not None:
            signature = "\n".join(f"{base}:{digest}" for base, _, digest in ancestors)
            known = index.start(top, signature)
            kept = index.new[top]["dirs"]
        found: list[str] = []
        stat = os.stat
        stack: list[tuple[str, list[tuple[str, Patterns]]]] = [
            (top, [(base, spec) for base, spec, _ in ancestors])
        ]
        while stack:
            directory, inherited = stack.pop()
            try:
                dir_stat = stat(directory)
            except OSError:
                self.complete = False
                continue
            self.stamped.append((directory, dir_stat))
            # Adding, removing or renaming an entry moves mtime/ctime; a replaced directory has
            # a new inode.
            dir_stamp = (dir_stat.st_mtime_ns, dir_stat.st_ctime_ns, dir_stat.st_ino)
            ignores = inherited
            if known is not None:
                entry = known.get(directory)
                if WalkIndex.usable(entry) and entry[0] == dir_stamp:  # type: ignore[index]
                    text = None
                    if gitignore and entry[1] is not None:
                        text = self._read_ignore(os.path.join(directory, ".gitignore"))
                    if entry[1] is None or (text is not None and _digest(text) == entry[1]):
                        if text is not None:
                            ignores = [*inherited, (directory, Patterns(text.splitlines()))]
                        kept[directory] = entry  # type: ignore[assignment]
                        prefix = _prefix(directory)
                        found += [prefix + name for name in entry[2]]  # type: ignore[index]
                        stack += [(prefix + name, ignores) for name in entry[3]]  # type: ignore[index]
                        continue
            try:
                with os.scandir(directory) as listing:
                    entries = list(listing)
            except OSError:
                continue
            ignore_digest = None
            if gitignore and directory != top and any(e.name == ".gitignore" for e in entries):
                text = self._read_ignore(os.path.join(directory, ".gitignore"))
                if text is not None:
                    ignore_digest = _digest(text)
                    ignores = [*inherited, (directory, Patterns(text.splitlines()))]
            relative_dir = None
            if top_relative is not None:
                below = _relative(directory, top)
                relative_dir = "/".join(p for p in (top_relative, below) if p)
            subdirs: list[str] = []
            files: list[str] = []
            symlinks = False
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
                    if entry.is_symlink():
                        symlinks = True  # its target can change kind without this dir changing
                    else:
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
                if entry.is_symlink():
                    symlinks = True
                files.append(name)
            if index is not None and not symlinks:
                index.record(top, directory, [dir_stamp, ignore_digest, files, subdirs])
            prefix = _prefix(directory)
            found += [prefix + name for name in files]
            stack += [(prefix + name, ignores) for name in subdirs]
        return found


@dataclass(frozen=True)
class Discovery:
    """The files to lint (absolute, sorted, unique) and what decided that list: every directory
    and ignore file consulted, with its stamp, and whether all of them could be stamped."""

    files: list[str]
    stamped: list[tuple[str, os.stat_result]]
    complete: bool


def discover(
    paths: list[str],
    config: LintConfig,
    root: Path,
    *,
    force_exclude: bool = False,
    index_dir: Path | None = None,
) -> Discovery:
    """The files to lint below `paths`. Missing paths raise FileNotFoundError. `index_dir` (the
    cache directory) keeps a WalkIndex there so unchanged directories are not listed again."""
    walker = Walker(config, root)
    index = WalkIndex(index_dir, walk_settings_key(config, root)) if index_dir else None
    found: set[str] = set()
    for raw in paths:
        if os.path.isdir(raw):
            try:
                found.update(walker.walk(raw, index))
            except (TypeError, ValueError):  # an index damaged in a way its checks missed
                if index is None:
                    raise
                index.discard()
                index.save()
                index = None
                found.update(walker.walk(raw))
        elif os.path.exists(raw):
            if force_exclude and walker.excluded(raw, is_dir=False):
                continue
            found.add(os.path.realpath(raw))
        else:
            raise FileNotFoundError(raw)
    if index is not None:
        index.save()
    return Discovery(sorted(found), walker.stamped, walker.complete)
