"""One document, bytes to diagnostics (and fixed bytes): source, parse, rules, noqa, fixes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from trio_lint.lint import noqa
from trio_lint.lint.engine_codes import ALWAYS_SHOWN, NAMES, UNUSED_NOQA, file_error
from trio_lint.lint.findings import Finding, Span
from trio_lint.lint.fixes import (
    FixError,
    TextEdit,
    apply_fixes,
    comments,
    fix_edits,
    keep_comments,
    lost_comments,
)
from trio_lint.lint.parse import LineIndex, SourceError, parse
from trio_lint.lint.prefilter import mentions_sdk
from trio_lint.output.diagnostics import (
    Applicability,
    Diagnostic,
    Edit,
    FixInfo,
    Location,
    Severity,
)
from trio_lint.semantics.names import Binding
from trio_lint.settings.config import LintConfig
from trio_lint.sources import Document, Unit, load_document

if TYPE_CHECKING:
    from trio_lint.rules.base import Rule

MAX_FIX_PASSES = 8
_COMMENT_FIXES = frozenset({UNUSED_NOQA})  # fixes that edit a comment on purpose


@dataclass
class FileOutcome:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    new_bytes: bytes | None = None  # set when fixes (or --add-noqa) changed the file
    fixed: list[Diagnostic] = field(default_factory=list)
    skipped: bool = False  # the prefilter found no SDK module name


# --- one unit ---------------------------------------------------------------------------------


@dataclass
class UnitCheck:
    findings: list[Finding]
    bindings: dict[str, Binding]
    index: LineIndex


def check_unit(
    code: str,
    config: LintConfig,
    rules: Sequence[type[Rule]],
    seed: dict[str, Binding] | None = None,
    *,
    report_unused_noqa: bool = False,
) -> UnitCheck:
    """Findings of one unit after `# noqa` filtering; a syntax error is a PTR900 finding."""
    from trio_lint.lint.dispatch import check_tree

    index = LineIndex(code)
    try:
        tree = parse(code)
    except SourceError as error:
        byte_col = len(index.line_text(error.line)[: max(error.column - 1, 0)].encode())
        span = Span(error.line, byte_col, error.line, byte_col)
        finding = Finding(error.code, span, error.message, Severity.ERROR, name=NAMES[error.code])
        return UnitCheck([finding], dict(seed or {}), index)
    findings, model = check_tree(tree, code, config, rules, seed)
    bindings = model.module_imports()
    kept: list[Finding] = []
    used: dict[int, set[str]] = {}
    for finding in findings:
        directive = noqa.parse_line(index.line_text(finding.span.line), finding.span.line)
        if directive is not None and directive.suppresses(finding.code):
            used.setdefault(finding.span.line, set()).add(finding.code)
            continue
        kept.append(finding)
    if report_unused_noqa and "noqa" in code.lower():
        kept.extend(noqa.unused(code, index, used))
    return UnitCheck(kept, bindings, index)


def fix_unit(
    code: str,
    config: LintConfig,
    rules: Sequence[type[Rule]],
    seed: dict[str, Binding] | None,
    *,
    unsafe: bool,
    report_unused_noqa: bool = False,
) -> tuple[str, list[Finding], UnitCheck]:
    """Fix until nothing fixable remains (fixes converge). Returns (code, fixed, final check).
    A safe fix that would delete a comment is unsafe (`keep_comments`): the final check reports
    it so, with the comments it would delete."""
    allowed = {Applicability.SAFE, Applicability.UNSAFE} if unsafe else {Applicability.SAFE}
    fixed: list[Finding] = []
    result = check_unit(code, config, rules, seed, report_unused_noqa=report_unused_noqa)
    for _ in range(MAX_FIX_PASSES):
        if not any(f.fix is not None and f.fix.applicability in allowed for f in result.findings):
            break
        result.findings = keep_comments(code, result.findings, _COMMENT_FIXES)
        fixable = [
            f for f in result.findings if f.fix is not None and f.fix.applicability in allowed
        ]
        if not fixable:
            break
        try:
            new_code, applied = apply_fixes(code, fixable)
        except FixError:
            break
        if not applied or new_code == code:
            break
        if (
            not unsafe
            and not any(f.code in _COMMENT_FIXES for f in applied)
            and lost_comments(comments(code), new_code) != []
        ):
            break  # safe fixes that keep comments one by one lose some together: none applied
        fixed.extend(applied)
        code = new_code
        result = check_unit(code, config, rules, seed, report_unused_noqa=report_unused_noqa)
    result.findings = keep_comments(code, result.findings, _COMMENT_FIXES)
    return code, fixed, result


# --- whole documents ----------------------------------------------------------------------------


def _edit(edit: TextEdit, document: Document, unit: Unit) -> Edit:
    line, column, _ = document.display(unit, edit.line, edit.column + 1)
    end_line, end_column, _ = document.display(unit, edit.end_line, edit.end_column + 1)
    return Edit(
        content=edit.content,
        location=Location(row=line, column=column),
        end_location=Location(row=end_line, column=end_column),
    )


def to_diagnostics(
    path: str,
    document: Document,
    unit: Unit,
    check: UnitCheck,
    *,
    want_edits: bool = False,
) -> list[Diagnostic]:
    diagnostics = []
    # Every finding's edits from one libcst parse of the unit (only JSON and SARIF show them);
    # libcst is loaded then, so the fixes that would delete a comment are shown as unsafe too.
    if want_edits:
        check.findings = keep_comments(unit.code, check.findings, _COMMENT_FIXES)
    all_edits = fix_edits(unit.code, check.findings) if want_edits else []
    for number, finding in enumerate(check.findings):
        span = finding.span
        column = check.index.char_column(span.line, span.col) + 1
        end_column = check.index.char_column(span.end_line, span.end_col) + 1
        line, column, cell = document.display(unit, span.line, column)
        end_line, end_column, _ = document.display(unit, span.end_line, end_column)
        fix_info = None
        if finding.fix is not None:
            edits = (
                tuple(_edit(edit, document, unit) for edit in all_edits[number])
                if want_edits
                else ()
            )
            fix_info = FixInfo(
                applicability=finding.fix.applicability, message=finding.fix.message, edits=edits
            )
        diagnostics.append(
            Diagnostic(
                code=finding.code,
                name=finding.name or finding.code,
                message=finding.message,
                severity=finding.severity,
                path=path,
                line=line,
                column=column,
                end_line=end_line,
                end_column=end_column,
                cell=cell,
                fix=fix_info,
                noqa_row=line,
            )
        )
    return diagnostics


def lint_document(
    path: str,
    data: bytes,
    config: LintConfig,
    rules: Sequence[type[Rule]],
    *,
    fix: str | None = None,  # None | "safe" | "unsafe"
    want_edits: bool = False,
    add_noqa: bool = False,
    prefiltered: bool = False,
) -> FileOutcome:
    """Everything for one file; bad input never raises (it becomes a PTR900/PTR901 finding).
    `prefiltered`: the caller already checked that the file names an SDK module."""
    outcome = FileOutcome()
    if not prefiltered and not mentions_sdk(data, config):
        outcome.skipped = True
        return outcome
    selected = {rule.code for rule in rules}
    # "Could not check this file" findings show unless ignored by name (`ALWAYS_SHOWN`).
    selected |= {
        code for code in ALWAYS_SHOWN if not any(code.startswith(s) for s in config.ignore)
    }
    try:
        document = load_document(path, data)
    except SourceError as error:
        if error.code in selected:
            outcome.diagnostics.append(_file_error(path, error))
        return outcome
    report_unused = UNUSED_NOQA in selected
    seed: dict[str, Binding] = {}
    new_codes: list[str] = []
    for unit in document.units:
        unit_seed = seed if unit.inherit_imports else None
        if fix is not None:
            code, fixed, check = fix_unit(
                unit.code,
                config,
                rules,
                unit_seed,
                unsafe=fix == "unsafe",
                report_unused_noqa=report_unused,
            )
            if fixed:
                before = UnitCheck(fixed, {}, LineIndex(unit.code))
                outcome.fixed.extend(to_diagnostics(path, document, unit, before))
        else:
            code = unit.code
            check = check_unit(code, config, rules, unit_seed, report_unused_noqa=report_unused)
        if add_noqa:
            code = noqa.add_to_lines(code, check.findings)
            check = check_unit(code, config, rules, unit_seed, report_unused_noqa=report_unused)
        new_codes.append(code)
        shown_unit = Unit(
            code, unit.line_offset, unit.column_offset, unit.cell_lines, unit.inherit_imports
        )
        check.findings = [f for f in check.findings if f.code in selected]
        outcome.diagnostics.extend(
            to_diagnostics(path, document, shown_unit, check, want_edits=want_edits)
        )
        if unit.inherit_imports:
            seed = check.bindings
    if any(new != unit.code for new, unit in zip(new_codes, document.units, strict=True)):
        try:
            outcome.new_bytes = document.rebuild(new_codes)
        except SourceError as error:
            outcome.diagnostics.append(_file_error(path, error))
            outcome.fixed = []
    outcome.diagnostics.sort(key=Diagnostic.sort_key)
    return outcome


def _file_error(path: str, error: SourceError) -> Diagnostic:
    return file_error(error.code, path, error.message, error.line, error.column)
