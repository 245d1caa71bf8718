"""What a lint run produces: diagnostics, their locations and their fixes (typed, picklable)."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    CONVENTION = "convention"
    INFO = "info"


class Applicability(StrEnum):
    """As in ruff: `safe` fixes apply with --fix, `unsafe` ones also need --unsafe-fixes."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    NONE = "none"


class Location(BaseModel):
    """A 1-based line and column (columns count characters, not bytes)."""

    model_config = ConfigDict(frozen=True)
    row: int
    column: int


class Edit(BaseModel):
    """A text replacement between two locations of the reported file (or notebook cell)."""

    model_config = ConfigDict(frozen=True)
    content: str
    location: Location
    end_location: Location


class FixInfo(BaseModel):
    model_config = ConfigDict(frozen=True)
    applicability: Applicability
    message: str
    # Filled only for reporters that show edits (json, sarif): computing them costs a libcst pass.
    edits: tuple[Edit, ...] = ()


class Diagnostic(BaseModel):
    """One finding. `line`/`column` are where the user sees the problem: the Markdown line for a
    fenced block, the cell-relative line (with `cell`) for a notebook."""

    model_config = ConfigDict(frozen=True)
    code: str
    name: str
    message: str
    severity: Severity
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    cell: int | None = None
    fix: FixInfo | None = None
    noqa_row: int | None = None

    @property
    def fixable(self) -> bool:
        return self.fix is not None and self.fix.applicability is not Applicability.NONE

    def sort_key(self) -> tuple[str, int, int, int, str]:
        return (self.path, self.cell or 0, self.line, self.column, self.code)


class FixResult(BaseModel):
    """The outcome of fixing one source: the new text, what was fixed and what remains."""

    model_config = ConfigDict(frozen=True)
    source: str
    fixed: tuple[Diagnostic, ...]
    remaining: tuple[Diagnostic, ...]

    @property
    def changed(self) -> bool:
        return bool(self.fixed)
