"""One `trio-lint` run, resolved once from the command line and the configuration.

The CLI builds a `RunRequest`; `invocation.execute` runs it. Standard input is not a separate code
path: it is a one-file job of the same run (same engine call, noqa, fixes, diff and report),
differing only in where the bytes come from and where fixed bytes go (stdout, never a file).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from trio_lint.settings.config import ConfigError, LintConfig

STDIN_NAME = "-"  # what standard input is reported as without --stdin-filename
EDIT_FORMATS = ("json", "sarif")  # the output formats that show each fix's text edits


class FixMode(StrEnum):
    """Which fixes the engine computes (to apply them, or to show them with --diff)."""

    NONE = "none"
    SAFE = "safe"
    UNSAFE = "unsafe"

    @property
    def engine(self) -> str | None:
        """The `fix` argument of `engine.lint_document`."""
        return None if self is FixMode.NONE else self.value


@dataclass(frozen=True, slots=True)
class PathSources:
    """Files and directories named on the command line (discovered at run time)."""

    paths: tuple[str, ...] = (".",)


@dataclass(frozen=True, slots=True)
class StdinSource:
    """`-`: the bytes read from standard input and the name they are reported under, which also
    decides their kind (`--stdin-filename answer.md` is Markdown)."""

    data: bytes
    name: str = STDIN_NAME

    @classmethod
    def read(cls, name: str | None) -> StdinSource:
        """Raises ConfigError (exit 2, nothing printed on stdout) for input over the file size
        limit: it is not read without bound (`trio-lint - < /dev/zero`), and with --fix a
        truncated copy must never be printed as if it were the fixed code."""
        from trio_lint.lint.parse import MAX_FILE_BYTES

        data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise ConfigError(
                f"standard input is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB;"
                " not linted (name the file instead)"
            )
        return cls(data, name or STDIN_NAME)


@dataclass(frozen=True, slots=True)
class Output:
    format: str = "full"
    statistics: bool = False
    show_fixes: bool = False
    quiet: bool = False
    exit_zero: bool = False


@dataclass(frozen=True, slots=True)
class RunRequest:
    sources: PathSources | StdinSource
    config: LintConfig
    root: Path
    fix: FixMode = FixMode.NONE  # --fix / --diff: the fixes computed
    unsafe_fixes: bool = False  # unsafe fixes count as available (applied or shown)
    diff: bool = False  # show the fixes as a unified diff; write nothing
    add_noqa: bool = False
    output: Output = field(default_factory=Output)
    use_cache: bool = True
    jobs: int | None = None
    force_exclude: bool = False  # excludes apply to named files (and --stdin-filename) too

    @property
    def from_stdin(self) -> bool:
        return isinstance(self.sources, StdinSource)

    @property
    def want_edits(self) -> bool:
        return self.output.format in EDIT_FORMATS

    @property
    def writes(self) -> bool:
        """Fixed code is written: into the files, or to stdout for standard input."""
        return self.fix is not FixMode.NONE and not self.diff
