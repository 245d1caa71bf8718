"""Code actions: one finding's fix, every safe fix of the document, a `# noqa: PTRxxx` comment.

Each edit comes from trio-lint itself, so the text changes exactly as on the command line: a
finding's fix is applied by the function `--fix` applies fixes with (to that finding alone),
"fix all" is `fix_source` (the CLI's `--fix`, safe fixes only, repeated until they converge),
and the comment is written by the code that writes `--add-noqa`'s comments. Unsafe fixes are
offered one by one under their own title and are never part of "fix all"."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from lsprotocol import types

from trio_lint import fix_source
from trio_lint.lint import noqa
from trio_lint.lint.engine_codes import ENGINE_CODES, UNUSED_NOQA
from trio_lint.lint.parse import parses
from trio_lint.output.diagnostics import Applicability, Diagnostic
from trio_lint.server.config_watch import Settings
from trio_lint.server.documents import (
    Target,
    cell_sources,
    offset_of,
    replace_all,
    split_lines,
    to_range,
)

FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.trio-lint"
KINDS = (types.CodeActionKind.QuickFix, FIX_ALL_KIND)
Edits = dict[str, list[types.TextEdit]]


def _same(a: Diagnostic, b: Diagnostic) -> bool:
    return (a.code, a.line, a.column, a.end_line, a.end_column, a.cell) == (
        b.code,
        b.line,
        b.column,
        b.end_line,
        b.end_column,
        b.cell,
    )


def fix_one(source: str, path: str, settings: Settings, diagnostic: Diagnostic) -> str | None:
    """The document after applying this one finding's fix, as `--fix` applies a fix (a libcst
    transformation of the module, so removed statements take their line with them); None when
    the finding or its fix is gone. Per-node edits (`lint_source(..., edits=True)`) would be
    cheaper but only approximate a removal."""
    from trio_lint.lint.fixes import FixError, apply_fixes
    from trio_lint.lint.linter import check_unit, to_diagnostics
    from trio_lint.lint.parse import SourceError
    from trio_lint.rules import select_rules
    from trio_lint.sources import load_document

    config = settings.config
    if config is None:
        return None
    unused_noqa = diagnostic.code == UNUSED_NOQA
    if not unused_noqa:  # only the finding's own rule needs to run
        config = replace(config, select=(diagnostic.code,), extend_select=())
    rules = select_rules(config)
    try:
        document = load_document(path, source.encode("utf-8"))
    except SourceError:
        return None
    seed: dict = {}
    codes: list[str] = []
    done = False
    for unit in document.units:
        check = check_unit(
            unit.code, config, rules, seed if unit.inherit_imports else None,
            report_unused_noqa=unused_noqa,
        )  # fmt: skip
        code = unit.code
        if not done:
            shown = to_diagnostics(path, document, unit, check)
            for finding, candidate in zip(check.findings, shown, strict=True):
                if _same(candidate, diagnostic) and finding.fix is not None:
                    try:
                        code, applied = apply_fixes(unit.code, [finding])
                    except FixError:
                        return None
                    done = bool(applied)
                    break
        codes.append(code)
        if unit.inherit_imports:
            seed = check.bindings
    if not done:
        return None
    try:
        return document.rebuild(codes).decode("utf-8-sig")
    except SourceError:
        return None


def _changes(target: Target, new_source: str, encoding: str) -> Edits:
    """The edits that turn the target's text into `new_source` (per cell for a notebook)."""
    if target.cells is None:
        edit = replace_all(target.source, new_source, encoding)
        return {target.key: [edit]} if edit is not None else {}
    edits: Edits = {}
    for cell, new_text in zip(target.cells, cell_sources(new_source), strict=True):
        edit = replace_all(cell.text, new_text, encoding)
        if edit is not None:
            edits[cell.uri] = [edit]
    return edits


def fix_edits(target: Target, settings: Settings, diagnostic: Diagnostic, encoding: str) -> Edits:
    """The edit of this one finding's fix (empty when it no longer applies)."""
    if diagnostic.fix is None:
        return {}
    new_source = fix_one(target.source, target.path, settings, diagnostic)
    return _changes(target, new_source, encoding) if new_source is not None else {}


def fix_all_edits(target: Target, settings: Settings, encoding: str, *, unsafe: bool) -> Edits:
    """What `trio-lint --fix` (with `unsafe`: `--fix --unsafe-fixes`) makes of the document."""
    if settings.config is None:
        return {}
    result = fix_source(
        target.source, target.path, settings.config, unsafe=unsafe, root=settings.root
    )
    return _changes(target, result.source, encoding) if result.changed else {}


def noqa_edits(target: Target, diagnostic: Diagnostic, encoding: str) -> Edits:
    """`# noqa: CODE` on the finding's line, written as `--add-noqa` writes it (and, as there,
    not when the line ends inside a string, where a comment would change the code)."""
    if diagnostic.code in ENGINE_CODES:
        return {}
    located = target.text_of(diagnostic.cell)
    if located is None:
        return {}
    uri, text = located
    lines = split_lines(text)
    row = (diagnostic.noqa_row or diagnostic.line) - 1
    if not 0 <= row < len(lines):
        return {}
    old = lines[row]
    new = noqa.add_codes(old, [diagnostic.code])
    if new == old:
        return {}
    start = offset_of(text, row, 0)
    candidate = text[:start] + new + text[start + len(old) :]
    if parses(text) and not parses(candidate):
        return {}
    edit = types.TextEdit(
        range=to_range(lines, (row + 1, 1), (row + 1, len(old) + 1), encoding), new_text=new
    )
    return {uri: [edit]}


# --- the actions offered -----------------------------------------------------------------------


def wanted(only: Sequence[str] | None, kind: str) -> bool:
    """LSP kinds are hierarchical: asking for `source.fixAll` includes `source.fixAll.trio-lint`."""
    if not only:
        return True
    return any(kind == want or kind.startswith(f"{want}.") for want in only)


def offered(
    uri: str,
    target: Target,
    diagnostics: Sequence[Diagnostic],
    in_range: Sequence[Diagnostic],
    only: Sequence[str] | None,
) -> list[tuple[str, str, dict[str, Any], Diagnostic | None]]:
    """(kind, title, resolve data, diagnostic) of every action for the requested range."""
    found: list[tuple[str, str, dict[str, Any], Diagnostic | None]] = []
    base: dict[str, Any] = {"uri": uri, "key": target.key, "version": target.version}
    if wanted(only, types.CodeActionKind.QuickFix):
        for diagnostic in in_range:
            fix = diagnostic.fix
            if fix is not None and fix.applicability is not Applicability.NONE:
                unsafe = fix.applicability is Applicability.UNSAFE
                title = f"trio-lint ({diagnostic.code}): {fix.message}"
                if unsafe:
                    title += " (unsafe fix)"
                found.append(
                    (
                        types.CodeActionKind.QuickFix.value,
                        title,
                        {**base, "action": "fix", "diagnostic": diagnostic.to_json()},
                        diagnostic,
                    )
                )
            if diagnostic.code not in ENGINE_CODES:
                found.append(
                    (
                        types.CodeActionKind.QuickFix.value,
                        f"trio-lint ({diagnostic.code}): add `# noqa: {diagnostic.code}`",
                        {**base, "action": "noqa", "diagnostic": diagnostic.to_json()},
                        diagnostic,
                    )
                )
    safe = any(d.fix is not None and d.fix.applicability is Applicability.SAFE for d in diagnostics)
    if safe and wanted(only, FIX_ALL_KIND):
        found.append(
            (FIX_ALL_KIND, "trio-lint: fix all safe fixes", {**base, "action": "fix_all"}, None)
        )
    return found


def compute(
    data: dict[str, Any], target: Target, settings: Settings, encoding: str
) -> types.WorkspaceEdit | None:
    """The edit of a resolved action (None when the document moved on since it was offered)."""
    if data.get("version") != target.version:
        return None
    action = data.get("action")
    if action == "fix_all":
        edits = fix_all_edits(target, settings, encoding, unsafe=False)
    else:
        diagnostic = Diagnostic.from_json(data["diagnostic"])
        if action == "fix":
            edits = fix_edits(target, settings, diagnostic, encoding)
        elif action == "noqa":
            edits = noqa_edits(target, diagnostic, encoding)
        else:
            return None
    return types.WorkspaceEdit(changes=edits) if edits else None
