"""What a lint run produces: diagnostics, their locations and their fixes (typed, picklable).

Plain frozen dataclasses, not pydantic models: `trio-lint` starts on every agent edit and a warm
run must cost little more than the interpreter, while importing pydantic alone costs ~0.1 s.
Nothing here is validated from outside input; the JSON and SARIF reporters are the boundary, and
the cache round-trips through `to_json`/`from_json`, which rebuild the enums."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


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


@dataclass(frozen=True)
class Location:
    """A 1-based line and column (columns count characters, not bytes)."""

    row: int
    column: int


@dataclass(frozen=True)
class Edit:
    """A text replacement between two locations of the reported file (or notebook cell)."""

    content: str
    location: Location
    end_location: Location


@dataclass(frozen=True)
class FixInfo:
    applicability: Applicability
    message: str
    # Filled only for reporters that show edits (json, sarif): computing them costs a libcst pass.
    edits: tuple[Edit, ...] = ()


@dataclass(frozen=True)
class Diagnostic:
    """One finding. `line`/`column` are where the user sees the problem: the Markdown line for a
    fenced block, the cell-relative line (with `cell`) for a notebook."""

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

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the cache's format); `from_json` reads it back."""
        fix = None
        if self.fix is not None:
            fix = {
                "applicability": self.fix.applicability.value,
                "message": self.fix.message,
                "edits": [
                    [e.content, e.location.row, e.location.column, e.end_location.row,
                     e.end_location.column]
                    for e in self.fix.edits
                ],
            }  # fmt: skip
        return {
            "code": self.code,
            "name": self.name,
            "message": self.message,
            "severity": self.severity.value,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "cell": self.cell,
            "fix": fix,
            "noqa_row": self.noqa_row,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Diagnostic:
        """The inverse of `to_json`; raises KeyError, TypeError or ValueError on damaged data."""
        fix = data["fix"]
        if fix is not None:
            fix = FixInfo(
                applicability=Applicability(fix["applicability"]),
                message=str(fix["message"]),
                edits=tuple(
                    Edit(content, Location(row, column), Location(end_row, end_column))
                    for content, row, column, end_row, end_column in fix["edits"]
                ),
            )
        return cls(
            code=str(data["code"]),
            name=str(data["name"]),
            message=str(data["message"]),
            severity=Severity(data["severity"]),
            path=str(data["path"]),
            line=int(data["line"]),
            column=int(data["column"]),
            end_line=int(data["end_line"]),
            end_column=int(data["end_column"]),
            cell=None if data["cell"] is None else int(data["cell"]),
            fix=fix,
            noqa_row=None if data["noqa_row"] is None else int(data["noqa_row"]),
        )


@dataclass(frozen=True)
class FixResult:
    """The outcome of fixing one source: the new text, what was fixed and what remains."""

    source: str
    fixed: tuple[Diagnostic, ...]
    remaining: tuple[Diagnostic, ...]

    @property
    def changed(self) -> bool:
        return bool(self.fixed)
