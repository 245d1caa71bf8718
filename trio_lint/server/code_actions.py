"""Code actions: one finding's fix, every safe fix of the document, a `# noqa: PTRxxx` comment.

Each edit comes from trio-lint itself, so the text changes exactly as on the command line: a
finding's fix is the edit `lint_source(..., edits=True)` reports for it, "fix all" is
`fix_source` (the CLI's `--fix`, safe fixes only, repeated until they converge), and the comment
is written by the code that writes `--add-noqa`'s comments. Unsafe fixes are offered one by one
under their own title and are never part of "fix all"."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from lsprotocol import types

from trio_lint import fix_source, lint_source, noqa
from trio_lint.diagnostics import Applicability, Diagnostic
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


def fix_edits(target: Target, settings: Settings, diagnostic: Diagnostic, encoding: str) -> Edits:
    """The edit of this one finding's fix (empty when it no longer applies)."""
    if settings.config is None or diagnostic.fix is None:
        return {}
    config = settings.config
    if diagnostic.code != noqa.UNUSED_NOQA:
        # Only the finding's own rule runs (and computes edits); an unused-noqa finding needs
        # every rule, to know which codes are used.
        config = replace(config, select=(diagnostic.code,), extend_select=())
    found = lint_source(target.source, target.path, config, root=settings.root, edits=True)
    for candidate in found:
        if _same(candidate, diagnostic) and candidate.fix is not None and candidate.fix.edits:
            located = target.text_of(candidate.cell)
            if located is None:
                return {}
            uri, text = located
            lines = split_lines(text)
            return {
                uri: [
                    types.TextEdit(
                        range=to_range(
                            lines,
                            (edit.location.row, edit.location.column),
                            (edit.end_location.row, edit.end_location.column),
                            encoding,
                        ),
                        new_text=edit.content,
                    )
                    for edit in candidate.fix.edits
                ]
            }
    return {}


def fix_all_edits(target: Target, settings: Settings, encoding: str, *, unsafe: bool) -> Edits:
    """What `trio-lint --fix` (with `unsafe`: `--fix --unsafe-fixes`) makes of the document."""
    if settings.config is None:
        return {}
    result = fix_source(
        target.source, target.path, settings.config, unsafe=unsafe, root=settings.root
    )
    if not result.changed:
        return {}
    if target.cells is None:
        edit = replace_all(target.source, result.source, encoding)
        return {target.key: [edit]} if edit is not None else {}
    edits: Edits = {}
    for cell, new_text in zip(target.cells, cell_sources(result.source), strict=True):
        edit = replace_all(cell.text, new_text, encoding)
        if edit is not None:
            edits[cell.uri] = [edit]
    return edits


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def noqa_edits(target: Target, diagnostic: Diagnostic, encoding: str) -> Edits:
    """`# noqa: CODE` on the finding's line, written as `--add-noqa` writes it (and, as there,
    not when the line ends inside a string, where a comment would change the code)."""
    if diagnostic.code in noqa.ENGINE_CODES:
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
    if _parses(text) and not _parses(candidate):
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
    found = []
    base = {"uri": uri, "key": target.key, "version": target.version}
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
            if diagnostic.code not in noqa.ENGINE_CODES:
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
