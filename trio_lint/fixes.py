"""Apply rule fixes as libcst transformations of the nodes the findings point at.

A finding's `NodeEdit` names a span (from `ast`) and a libcst node class; the node with exactly that
position (libcst `PositionProvider`) is transformed bottom-up, so nested edits compose in one pass.
Everything outside the edited nodes is reproduced byte for byte by libcst's code generation.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from trio_lint.parse import LineIndex
from trio_lint.rules.base import CstTransform, Finding

SpanKey = tuple[int, int, int, int]


class FixError(Exception):
    """libcst could not parse the code, or the fixed code does not parse."""


def _char_span(index: LineIndex, finding_span) -> SpanKey:
    return (
        finding_span.line,
        index.char_column(finding_span.line, finding_span.col),
        finding_span.end_line,
        index.char_column(finding_span.end_line, finding_span.end_col),
    )


def _transformer(targets: dict[int, list[CstTransform]]):
    import libcst as cst  # loaded only when something is fixed (it costs ~0.25 s to import)

    class Apply(cst.CSTTransformer):
        def on_leave(self, original_node, updated_node):  # type: ignore[override]
            transforms = targets.get(id(original_node))
            if transforms:
                for transform in transforms:
                    updated_node = transform(updated_node)
            return updated_node

    return Apply()


def apply_fixes(code: str, findings: Iterable[Finding]) -> tuple[str, list[Finding]]:
    """Apply every edit of the given findings' fixes. Returns (new code, findings fully applied).

    Raises FixError when libcst cannot parse `code` or the result is not valid Python."""
    index = LineIndex(code)
    wanted: dict[SpanKey, list[tuple[type, CstTransform, int]]] = {}
    findings = [finding for finding in findings if finding.fix is not None]
    for number, finding in enumerate(findings):
        for node_edit in finding.fix.edits:  # type: ignore[union-attr]
            key = _char_span(index, node_edit.span)
            wanted.setdefault(key, []).append((node_edit.kind, node_edit.transform, number))
    if not wanted:
        return code, []
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    try:
        module = cst.parse_module(code)
    except cst.ParserSyntaxError as exc:
        raise FixError(f"libcst cannot parse the file: {exc.message}") from None
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    targets: dict[int, list[CstTransform]] = {}
    matched_edits: dict[int, int] = {}
    for node, code_range in positions.items():
        key = (
            code_range.start.line,
            code_range.start.column,
            code_range.end.line,
            code_range.end.column,
        )
        for kind, transform, number in wanted.get(key, ()):
            if isinstance(node, kind):
                targets.setdefault(id(node), []).append(transform)
                matched_edits[number] = matched_edits.get(number, 0) + 1
    applied = [
        finding
        for number, finding in enumerate(findings)
        if matched_edits.get(number, 0) == len(finding.fix.edits)  # type: ignore[union-attr]
    ]
    if len(applied) != len(findings):
        # Apply only fixes whose every edit found its node; a partial fix could break the code.
        keep = {id(f) for f in applied}
        return apply_fixes(code, [f for f in findings if id(f) in keep]) if keep else (code, [])
    new_code = module.visit(_transformer(targets)).code
    try:
        ast.parse(new_code)
    except (SyntaxError, ValueError) as exc:
        raise FixError(f"the fixed code does not parse: {exc}") from None
    return new_code, applied
