"""Execute a `RunRequest`: for files, the cache, prefilter, per-file rule sets, a process pool when
it pays, fixes written atomically; standard input is a one-file job of the same run (never cached,
fixed bytes returned for stdout). Diagnostics sorted by path, line and column."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from trio_lint.lint.engine_codes import IO_ERROR, UNSTABLE_CODES, file_error, internal_error
from trio_lint.lint.prefilter import mentions_sdk
from trio_lint.output.diagnostics import Diagnostic
from trio_lint.run.cache import MISS, Cache, content_hash
from trio_lint.run.cache_keys import settings_key
from trio_lint.run.fileio import (
    ChangedMeanwhile,
    NotRegularFile,
    ReadOnly,
    TooLarge,
    read_regular,
    remove_stale,
    stale_beside,
    write_fixed,
)
from trio_lint.run.request import STDIN_NAME, FixMode, RunRequest, StdinSource
from trio_lint.settings.config import LintConfig

if TYPE_CHECKING:
    from trio_lint.lint.linter import FileOutcome
    from trio_lint.rules.base import Rule
    from trio_lint.run.cache import Cached

# A warm run imports none of the engine, the rules, pathspec or multiprocessing (together they
# cost more than all of a warm run's cache lookups): they are imported where a file is linted.

POOL_MIN_FILES = 24  # below this a pool's start-up costs more than it saves


@dataclass
class RunResult:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    fixed: list[Diagnostic] = field(default_factory=list)
    diffs: list[str] = field(default_factory=list)
    files_seen: int = 0
    files_linted: int = 0
    files_changed: int = 0
    # Standard input with fixes applied: the code to print (fixed, or unchanged).
    stdin_output: bytes | None = None
    written_dirs: set[str] = field(default_factory=set)  # where fixes were written


def display_path(path: str, cwd: str) -> str:
    """Relative to the working directory when below it (cheap string work: called per file)."""
    prefix = cwd.rstrip(os.sep) + os.sep
    if path.startswith(prefix):
        return path[len(prefix) :]
    try:
        return os.path.relpath(path, cwd)
    except ValueError:
        return path


class RuleSets:
    """The rules for each file: the selection minus the matching `per-file-ignores`."""

    def __init__(self, config: LintConfig, root: Path) -> None:
        import pathspec

        from trio_lint.rules import select_rules

        self.rules = select_rules(config)
        self.root = root
        self.patterns = [
            (pathspec.GitIgnoreSpec.from_lines([pattern]), codes)
            for pattern, codes in config.per_file_ignores.items()
        ]

    def for_path(self, path: str) -> tuple[type[Rule], ...]:
        if not self.patterns:
            return self.rules
        try:
            # os.path.realpath, not Path.resolve: it raises on a symlink loop (a name given with
            # --stdin-filename need not exist).
            real, root = os.path.realpath(path), os.path.realpath(self.root)
            relative = Path(real).relative_to(root).as_posix()
        except ValueError:
            relative = Path(path).name
        ignored = [
            code for spec, codes in self.patterns if spec.match_file(relative) for code in codes
        ]
        if not ignored:
            return self.rules
        from trio_lint.rules import matches

        return tuple(r for r in self.rules if not any(matches(r, s) for s in ignored))


def read_error(path: str, exc: OSError) -> Diagnostic:
    return io_error(path, f"cannot read the file: {exc.strerror or exc}")


def io_error(path: str, message: str) -> Diagnostic:
    return file_error(IO_ERROR, path, message)


def _source_error(path: str, exc: OSError) -> Diagnostic:
    """A file that is not read at all (too large, not a regular file) says so as it is; any
    other failure is a read error."""
    if isinstance(exc, NotRegularFile | TooLarge):
        return io_error(path, str(exc.strerror))
    return read_error(path, exc)


# --- worker side (also used in-process) ---------------------------------------------------------


@dataclass
class _Worker:
    """What a worker process (or this one) lints with, set once by `_init_worker`."""

    request: RunRequest
    rulesets: RuleSets


_WORKER: list[_Worker] = []  # at most one: a process pool's initializer sets it per process


def _init_worker(request: RunRequest) -> None:
    _WORKER[:] = [_Worker(request, RuleSets(request.config, request.root))]


# One file to lint: (path, the path shown, the bytes `run` read). The bytes travel with the
# job, so what is linted is exactly what the cache digest was computed from: a file edited
# after `run` read it is linted as it was read, and the next run sees the edit.
Job = tuple[str, str, bytes]


def _lint_one(job: Job) -> tuple[str, FileOutcome, bytes | None]:
    """(path, outcome, the bytes linted when the outcome changes them: what a write compares
    the file with, and what a diff starts from). Never raises."""
    path_text, shown, data = job
    outcome = _lint_bytes(path_text, shown, data)
    return path_text, outcome, data if outcome.new_bytes is not None else None


def _lint_bytes(path: str, shown: str, data: bytes) -> FileOutcome:
    """One document that `run` or `_run_stdin` read and prefiltered. Never raises."""
    from trio_lint.lint.linter import FileOutcome, lint_document

    request, rulesets = _WORKER[0].request, _WORKER[0].rulesets
    try:
        outcome = lint_document(
            shown,
            data,
            request.config,
            rulesets.for_path(path),
            fix=request.fix.engine,
            want_edits=request.want_edits,
            add_noqa=request.add_noqa,
            prefiltered=True,  # the caller read the bytes and checked them before queueing
        )
    except Exception as exc:  # an engine bug: report it on the file, keep the run going
        outcome = FileOutcome(diagnostics=[internal_error(shown, exc)])
    return outcome


def _use_cached(result: RunResult, cached: Cached, path: str, cwd: str) -> None:
    if cached is None:
        return  # the prefilter skipped this file last time
    result.files_linted += 1
    if cached:
        shown = display_path(path, cwd)
        result.diagnostics.extend(replace(d, path=shown) for d in cached)


def _lint_all(jobs: list[Job], request: RunRequest) -> list[tuple[str, FileOutcome, bytes | None]]:
    """Lint what the cache could not answer; in a process pool when there are enough files."""
    if not jobs:
        return []
    workers = request.jobs or os.cpu_count() or 1
    if len(jobs) >= POOL_MIN_FILES and workers > 1:
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        try:
            with ProcessPoolExecutor(
                max_workers=workers, initializer=_init_worker, initargs=(request,)
            ) as pool:
                chunk = max(1, len(jobs) // (workers * 4))
                return list(pool.map(_lint_one, jobs, chunksize=chunk))
        except BrokenProcessPool:
            pass  # a worker died (e.g. killed for memory): redo the files in this process
    _init_worker(request)
    return [_lint_one(job) for job in jobs]


def _unified_diff(before: str, after: str, shown: str) -> str:
    import difflib

    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"a/{shown}",
            tofile=f"b/{shown}",
        )
    )


def execute(request: RunRequest) -> RunResult:
    """The one entry of a run: files and directories, or standard input as a one-file job.
    Raises FileNotFoundError for a named path that does not exist."""
    if isinstance(request.sources, StdinSource):
        return _run_stdin(request, request.sources)
    from trio_lint.run.discovery import discover

    found = discover(
        list(request.sources.paths),
        request.config,
        request.root,
        force_exclude=request.force_exclude,
    )
    if request.writes:
        remove_stale(found.temps)  # left beside files by a --fix run that was killed
    result = run(found.files, request, cache_dir=request.root / request.config.cache_dir)
    if found.errors:
        cwd = os.getcwd()
        result.diagnostics.extend(io_error(display_path(p, cwd), why) for p, why in found.errors)
        result.diagnostics.sort(key=Diagnostic.sort_key)
    return result


def _run_stdin(request: RunRequest, source: StdinSource) -> RunResult:
    """Standard input: the same per-document path as a file (`_lint_bytes`), never cached; fixed
    code is returned for stdout instead of written, a diff is made against the input."""
    result = RunResult(files_seen=1)
    if request.writes:
        result.stdin_output = source.data
    if request.force_exclude and source.name != STDIN_NAME:
        from trio_lint.run.discovery import Walker

        if Walker(request.config, request.root).excluded(source.name, is_dir=False):
            return result
    if not mentions_sdk(source.data, request.config):
        return result
    _init_worker(request)
    outcome = _lint_bytes(source.name, source.name, source.data)
    _collect(result, request, outcome, path=None, shown=source.name, source=source.data)
    result.diagnostics.sort(key=Diagnostic.sort_key)
    return result


def _collect(
    result: RunResult,
    request: RunRequest,
    outcome: FileOutcome,
    *,
    path: str | None,
    shown: str,
    source: bytes | None,
) -> None:
    """Add one document's outcome: diagnostics, what was fixed, and the fixed bytes as a diff,
    as stdout (standard input: `path` is None) or written to the file, if the file still holds
    `source`, the bytes the fixes were computed from."""
    result.files_linted += 1
    if outcome.new_bytes is None:
        result.diagnostics.extend(outcome.diagnostics)
        return
    if request.diff:
        before = (source or b"").decode("utf-8", "replace")
        after = outcome.new_bytes.decode("utf-8", "replace")
        result.diffs.append(_unified_diff(before, after, shown))
    elif path is None:
        result.stdin_output = outcome.new_bytes
    else:
        try:
            written = write_fixed(path, outcome.new_bytes, source or b"")
        except ChangedMeanwhile:
            # Someone edited the file while the run was busy: their bytes win; a new run
            # computes the fixes from them.
            message = "the file changed while trio-lint was fixing it; nothing written, run again"
            result.diagnostics.append(io_error(shown, message))
            return
        except ReadOnly as exc:
            result.diagnostics.append(io_error(shown, str(exc.strerror)))
            return
        except OSError as exc:
            message = f"cannot write the fixes: {exc.strerror or exc}"
            result.diagnostics.append(io_error(shown, message))
            return
        if written != path:
            result.written_dirs.add(os.path.dirname(written))
        result.written_dirs.add(os.path.dirname(path))
    result.diagnostics.extend(outcome.diagnostics)
    result.fixed.extend(outcome.fixed)
    result.files_changed += 1


def run(files: Sequence[str], request: RunRequest, cache_dir: Path | None = None) -> RunResult:
    """The named files (already discovered) of a run."""
    config = request.config
    result = RunResult(files_seen=len(files))
    changing = request.fix is not FixMode.NONE or request.diff or request.add_noqa
    cache = None
    if request.use_cache and not changing and cache_dir is not None:
        cache = Cache(cache_dir, settings_key(config, want_edits=request.want_edits))
    jobs: list[Job] = []
    pending: dict[str, tuple[str, os.stat_result]] = {}  # path -> (digest, stat) to cache
    cwd = os.getcwd()
    for path in files:
        stat = None
        try:
            if cache is not None:
                stat = os.stat(path)
                cached = cache.by_stat(path, stat)
                if cached is not MISS:
                    _use_cached(result, cached, path, cwd)
                    continue
            data = read_regular(path)
        except OSError as exc:
            result.diagnostics.append(_source_error(display_path(path, cwd), exc))
            continue
        digest = ""
        if cache is not None and stat is not None:
            digest = content_hash(data)
            cached = cache.by_digest(path, digest)
            if cached is not MISS:
                cache.put(path, digest, stat, cached)  # refresh the stamp for the next run
                _use_cached(result, cached, path, cwd)
                continue
        if not mentions_sdk(data, config):
            if cache is not None and stat is not None:
                cache.put(path, digest, stat, None)
            continue
        if cache is not None and stat is not None:
            pending[path] = (digest, stat)
        jobs.append((path, display_path(path, cwd), data))

    for path_text, outcome, source in _lint_all(jobs, request):
        stable = not any(d.code in UNSTABLE_CODES for d in outcome.diagnostics)
        if cache is not None and path_text in pending and stable:
            digest, stat = pending[path_text]
            cache.put(path_text, digest, stat, outcome.diagnostics)
        shown = display_path(path_text, cwd)
        _collect(result, request, outcome, path=path_text, shown=shown, source=source)
    if result.written_dirs:
        # Temp files a killed run left beside the files named on the command line (the walk
        # reports those in the directories it lists).
        remove_stale([t for d in sorted(result.written_dirs) for t in stale_beside(d)])
    if cache is not None:
        cache.save()
    result.diagnostics.sort(key=Diagnostic.sort_key)
    return result
