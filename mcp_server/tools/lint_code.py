"""lint_code: run trio-lint on code the agent is about to run; optionally return it fixed.

The source arrives as text and is never written, imported or executed; `filename` only picks the
kind of document (.py, .ipynb, .md) and is what the findings report.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import anyio
from pydantic import BaseModel, Field, field_validator

from mcp_server.app import AppState, ToolInput
from mcp_server.spec import ToolCall, ToolSpec

if TYPE_CHECKING:  # trio_lint is imported when the tool first runs
    from trio_lint import Diagnostic

_FILENAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}\.(py|pyi|ipynb|md)$")


class LintCodeInput(ToolInput):
    source: str = Field(max_length=500_000, description="The code to check, as text.")
    filename: str = Field(
        "snippet.py",
        max_length=100,
        description="A bare file name ending in .py, .pyi, .ipynb or .md; it picks how the "
        "source is read. No directories: nothing is read from disk.",
    )
    fix: bool = Field(False, description="Also return the source with the safe fixes applied.")

    @field_validator("filename")
    @classmethod
    def _bare_name(cls, value: str) -> str:
        if not _FILENAME.fullmatch(value):
            raise ValueError(
                "use a bare file name like 'train.py' (letters, digits, '_', '.', '-'; ending in "
                ".py, .pyi, .ipynb or .md; no directories)"
            )
        return value


class Finding(BaseModel):
    code: str
    name: str
    message: str
    severity: str
    line: int
    column: int
    end_line: int
    end_column: int
    fixable: bool


class LintCodeOutput(BaseModel):
    findings: list[Finding] = Field(description="What trio-lint reports (after fixes, if fix).")
    fixed: list[Finding] = Field(description="Findings the fixes removed (empty unless fix).")
    fixed_source: str | None = Field(description="The source with safe fixes (only with fix).")
    summary: str


def _finding(diagnostic: Diagnostic) -> Finding:
    d = diagnostic
    return Finding(
        code=d.code,
        name=d.name,
        message=d.message,
        severity=str(getattr(d.severity, "value", d.severity)),
        line=d.line,
        column=d.column,
        end_line=d.end_line,
        end_column=d.end_column,
        fixable=d.fixable,
    )


def _lint(args: LintCodeInput) -> LintCodeOutput:
    import trio_lint

    if args.fix:
        result = trio_lint.fix_source(args.source, path=args.filename)
        findings = [_finding(d) for d in result.remaining]
        fixed = [_finding(d) for d in result.fixed]
        fixed_source: str | None = result.source
    else:
        findings = [_finding(d) for d in trio_lint.lint_source(args.source, path=args.filename)]
        fixed, fixed_source = [], None
    if findings:
        codes = ", ".join(sorted({f.code for f in findings}))
        summary = f"{len(findings)} finding(s): {codes}"
    else:
        summary = "no findings"
    if fixed:
        summary += f"; {len(fixed)} fixed"
    return LintCodeOutput(
        findings=findings, fixed=fixed, fixed_source=fixed_source, summary=summary
    )


async def lint_code(app: AppState, args: LintCodeInput, ctx: ToolCall) -> LintCodeOutput:
    return await anyio.to_thread.run_sync(_lint, args)


SPEC = ToolSpec(
    name="lint_code",
    title="Lint PyTRIO code",
    description=(
        "Check PyTRIO code with trio-lint before running it: each finding names the rule, the "
        "problem and the fix; with fix=true the safely fixed source comes back too. The code is "
        "only parsed, never run."
    ),
    input_model=LintCodeInput,
    output_model=LintCodeOutput,
    handler=lint_code,
    read_only=True,
    destructive=False,
    idempotent=True,
    open_world=False,
)
