"""Apply rule fixes as libcst transformations of the nodes the findings point at.

A finding's `NodeEdit` names a span (from `ast`) and a libcst node class (by name); the node with
exactly that position (libcst `PositionProvider`) is transformed bottom-up, so nested edits
compose in one pass.
Everything outside the edited nodes is reproduced byte for byte by libcst's code generation.
A safe fix that would delete a comment is made unsafe (`keep_comments`) before it is applied.
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace

from trio_lint.lint.findings import CstTransform, Finding
from trio_lint.lint.parse import LineIndex, parse_ast
from trio_lint.output.diagnostics import Applicability

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


def node_class(kind: str) -> type:
    """The libcst node class a `NodeEdit.kind` names. An unknown name is a bug in the rule that
    made the edit, so it raises (not FixError, which means "this file cannot be fixed")."""
    import libcst as cst

    found = getattr(cst, kind, None)
    if not (isinstance(found, type) and issubclass(found, cst.CSTNode)):
        raise LookupError(f"NodeEdit.kind {kind!r} is not a libcst node class name")
    return found


def _transformer(targets: dict[int, list[CstTransform]]):
    import libcst as cst  # loaded only when something is fixed (it costs ~0.25 s to import)

    class Apply(cst.CSTTransformer):
        def on_leave(self, original_node, updated_node):
            transforms = targets.get(id(original_node))
            if transforms:
                for transform in transforms:
                    updated_node = transform(updated_node)
            return updated_node

    return Apply()


_LINE_END = re.compile(r"(?<=\n)|(?<=\r)(?!\n)")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _lines(text: str) -> list[str]:
    parts = _LINE_END.split(text)
    return parts[:-1] if parts and parts[-1] == "" else parts


def _column_shift(original: str, roundtrip: str) -> dict[int, int]:
    """Per line, how many leading characters libcst's output lost (its positions count without)."""
    shift = {}
    for number, (kept, lost) in enumerate(
        zip(_lines(original), _lines(roundtrip), strict=False), start=1
    ):
        if len(kept) != len(lost):
            shift[number] = len(kept) - len(lost)
    return shift


def _transplant(original: str, roundtrip: str, fixed: str) -> str:
    """libcst drops some bytes it cannot represent (a form feed used as indentation). Apply the
    lines the fix changed to the *original* text instead, restoring lost leading whitespace, so
    everything outside the edited lines stays byte for byte."""
    before, after, source = _lines(roundtrip), _lines(fixed), _lines(original)
    if len(before) != len(source):
        raise FixError("libcst does not reproduce this file exactly; not fixed")
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.extend(source[i1:i2])
            continue
        for offset, line in enumerate(after[j1:j2]):
            restored = line
            if i1 + offset < i2:
                kept, lost = source[i1 + offset], before[i1 + offset]
                kept_indent = kept[: len(kept) - len(kept.lstrip())]
                lost_indent = lost[: len(lost) - len(lost.lstrip())]
                if kept_indent != lost_indent and line.startswith(lost_indent):
                    restored = kept_indent + line[len(lost_indent) :]
            out.append(restored)
    return "".join(out)


@dataclass(frozen=True, slots=True)
class TextEdit:
    """Replace the text from (line, column) to (end_line, end_column) of the fixed code with
    `content`; lines 1-based, columns 0-based in characters."""

    line: int
    column: int
    end_line: int
    end_column: int
    content: str


def _keep_final_newline(module, code: str):
    """`module`, printing the final line break of `code` again where libcst dropped it.

    libcst (checked on 1.9.0) does not count a lone "\\r" at the end of a file as a trailing
    newline, so its code lost that byte: the line lengths of a CR-only file then disagreed with
    the source on the last line, whose fixes never found their nodes. The break is in the tree
    (as the last line's newline token); only the flag that prints it is off."""
    if module.has_trailing_newline or not code.endswith("\r"):
        return module
    restored = module.with_changes(has_trailing_newline=True)
    return restored if restored.code == code else module


def _locate(code: str, findings: list[Finding]):
    """One libcst parse of `code` and, per finding, the (node, range, transform) of each of its
    edits that found its node. Raises FixError when libcst cannot parse `code`."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    try:
        module = _keep_final_newline(cst.parse_module(code), code)
    except cst.ParserSyntaxError as exc:
        raise FixError(f"libcst cannot parse the file: {exc.message}") from None
    roundtrip = module.code
    shift = _column_shift(code, roundtrip) if roundtrip != code else {}
    index = LineIndex(code)
    wanted: dict[SpanKey, list[tuple[type, CstTransform, int]]] = {}
    for number, finding in enumerate(findings):
        for node_edit in finding.fix.edits if finding.fix is not None else ():
            line, col, end_line, end_col = _char_span(index, node_edit.span)
            key = (line, col - shift.get(line, 0), end_line, end_col - shift.get(end_line, 0))
            wanted.setdefault(key, []).append(
                (node_class(node_edit.kind), node_edit.transform, number)
            )
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    located: list[list[tuple[object, object, CstTransform]]] = [[] for _ in findings]
    for node, code_range in positions.items():
        key = (
            code_range.start.line,
            code_range.start.column,
            code_range.end.line,
            code_range.end.column,
        )
        for kind, transform, number in wanted.get(key, ()):
            if isinstance(node, kind):
                located[number].append((node, code_range, transform))
    return module, roundtrip, shift, located


def fix_edits(code: str, findings: list[Finding]) -> list[tuple[TextEdit, ...]]:
    """For each finding (in order), the text edits its fix makes, from one libcst parse of
    `code` for all of them: each edited node's text before and after its transform, trimmed to
    the part that changes (widened to whole identifiers: `lr` -> `learning_rate`, not `r` ->
    `earning_rate`). A fix whose edits do not all find their node gets no edits."""
    if not any(f.fix is not None for f in findings):
        return [() for _ in findings]
    try:
        module, roundtrip, shift, located = _locate(code, findings)
    except FixError:
        return [() for _ in findings]
    lines = _lines(code)
    if roundtrip != code and len(_lines(roundtrip)) != len(lines):
        return [() for _ in findings]
    lines.append("")  # a range may end at the start of the line after the last
    result: list[tuple[TextEdit, ...]] = []
    for finding, found in zip(findings, located, strict=True):
        if finding.fix is None or len(found) != len(finding.fix.edits):
            result.append(())
            continue
        edits: list[TextEdit] = []
        whole_file = False
        for node, code_range, transform in found:
            before = module.code_for_node(node)
            if not before.startswith(_text_at(lines, code_range, shift)):
                whole_file = True  # the node's code starts before its range (leading lines)
                break
            after_node = transform(node)
            if _is_removal(after_node):
                whole_file = True  # a removed statement takes its line along: diff the whole file
                break
            after = module.code_for_node(after_node)
            start = code_range.start
            edit = _trimmed(before, after, start.line, start.column + shift.get(start.line, 0))
            if edit is not None:
                edits.append(edit)
        result.append(_whole_file_edit(code, finding) if whole_file else tuple(edits))
    return result


def _whole_file_edit(code: str, finding: Finding) -> tuple[TextEdit, ...]:
    """The one edit a fix makes, from applying it alone and diffing the text (for the fixes a
    node's own text cannot describe: removed statements, nodes with leading lines)."""
    try:
        after, applied = apply_fixes(code, [finding])
    except FixError:
        return ()
    if not applied:
        return ()
    edit = _trimmed(code, after, 1, 0)
    return (edit,) if edit is not None else ()


def _text_at(lines: list[str], code_range, shift: dict[int, int]) -> str:
    start, end = code_range.start, code_range.end
    first = start.column + shift.get(start.line, 0)
    last = end.column + shift.get(end.line, 0)
    if start.line == end.line:
        return lines[start.line - 1][first:last]
    middle = lines[start.line : end.line - 1]
    return lines[start.line - 1][first:] + "".join(middle) + lines[end.line - 1][:last]


def _is_removal(node: object) -> bool:
    import libcst as cst

    return isinstance(node, cst.RemovalSentinel)


def _trimmed(before: str, after: str, line: int, column: int) -> TextEdit | None:
    start = 0
    limit = min(len(before), len(after))
    while start < limit and before[start] == after[start]:
        start += 1
    end_before, end_after = len(before), len(after)
    while (
        end_before > start and end_after > start and before[end_before - 1] == after[end_after - 1]
    ):
        end_before -= 1
        end_after -= 1
    while start > 0 and _is_word(before[start - 1]):
        start -= 1
    while end_before < len(before) and end_after < len(after) and _is_word(before[end_before]):
        end_before += 1
        end_after += 1
    if start == end_before and start == end_after:
        return None

    breaks = [found.end() for found in _LINE_BREAK.finditer(before)]

    def position(offset: int) -> tuple[int, int]:
        # Every line break counts ("\r" alone ends a line too); a "\r\n" that `offset` cuts
        # in two does not end the line yet.
        lines_before = bisect.bisect_right(breaks, offset)
        if lines_before == 0:
            return line, column + offset
        return line + lines_before, offset - breaks[lines_before - 1]

    (l1, c1), (l2, c2) = position(start), position(end_before)
    return TextEdit(l1, c1, l2, c2, after[start:end_after])


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def apply_fixes(code: str, findings: Iterable[Finding]) -> tuple[str, list[Finding]]:
    """Apply every edit of the given findings' fixes. Returns (new code, findings fully applied).

    Raises FixError when libcst cannot parse `code` or the result is not valid Python."""
    findings = [finding for finding in findings if finding.fix is not None]
    if not findings:
        return code, []
    module, roundtrip, _shift, located = _locate(code, findings)
    targets: dict[int, list[CstTransform]] = {}
    matched_edits: dict[int, int] = {}
    for number, found in enumerate(located):
        for node, _range, transform in found:
            targets.setdefault(id(node), []).append(transform)
            matched_edits[number] = matched_edits.get(number, 0) + 1
    applied = [
        finding
        for number, finding in enumerate(findings)
        if matched_edits.get(number, 0) == len(finding.fix.edits)  # type: ignore[union-attr]  # callers pass fixable ones
    ]
    if len(applied) != len(findings):
        # Apply only fixes whose every edit found its node; a partial fix could break the code.
        keep = {id(f) for f in applied}
        return apply_fixes(code, [f for f in findings if id(f) in keep]) if keep else (code, [])
    new_code = module.visit(_transformer(targets)).code
    if roundtrip != code:
        new_code = _transplant(code, roundtrip, new_code)
    try:
        parse_ast(new_code)
    except (SyntaxError, ValueError) as exc:
        raise FixError(f"the fixed code does not parse: {exc}") from None
    return new_code, applied


# --- comments: a safe fix never deletes one ------------------------------------------------------

_SHOWN_COMMENTS = 3


def comments(code: str) -> Counter[str] | None:
    """The comments of `code` (text, counted); None when it cannot be tokenized."""
    import io
    import tokenize

    found: Counter[str] = Counter()
    try:
        # newline="": lines end where Python's end ("\r" alone too), else a comment before a
        # lone "\r" would run on into the next line's code.
        for token in tokenize.generate_tokens(io.StringIO(code, newline="").readline):
            if token.type == tokenize.COMMENT:
                found[token.string.rstrip()] += 1
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    return found


def lost_comments(before: Counter[str] | None, after: str) -> list[str] | None:
    """The comments of `before` missing from `after` (None: cannot tell)."""
    kept = comments(after)
    if before is None or kept is None:
        return None
    return list((before - kept).elements())  # in the order they appear


def _near_comment(lines: list[str], finding: Finding) -> bool:
    """Whether a comment may sit where the fix edits: on a line of an edited node, or in the
    comment lines right above it (libcst counts those as the statement's own, and a removed
    statement takes them along). Cheap: most fixes need no libcst pass to be cleared."""
    for edit in finding.fix.edits if finding.fix is not None else ():
        first, last = edit.span.line, edit.span.end_line
        if any("#" in line for line in lines[first - 1 : last]):
            return True
        above = first - 2
        while above >= 0 and (not lines[above].strip() or lines[above].lstrip().startswith("#")):
            if lines[above].lstrip().startswith("#"):
                return True
            above -= 1
    return False


def _unsafe(finding: Finding, why: str) -> Finding:
    fix = finding.fix
    assert fix is not None
    message = f"{fix.message} (unsafe: {why})"
    return replace(finding, fix=replace(fix, applicability=Applicability.UNSAFE, message=message))


def keep_comments(
    code: str, findings: list[Finding], exempt: frozenset[str] = frozenset()
) -> list[Finding]:
    """`findings`, with each safe fix that would delete a comment of `code` made unsafe, saying
    which comments (ruff's convention: a fix that drops comments is not safe to apply unseen).
    `exempt`: codes whose fixes are about a comment (an unused `# noqa` directive).

    Only fixes that edit a line holding a comment (or just below comment lines) are checked; all
    of them are applied together first, and only when that loses a comment one by one."""
    if "#" not in code:
        return findings
    lines = _LINE_BREAK.split(code)  # Python's line breaks (splitlines also splits at "\f")
    suspects = [
        number
        for number, finding in enumerate(findings)
        if finding.fix is not None
        and finding.fix.applicability is Applicability.SAFE
        and finding.code not in exempt
        and _near_comment(lines, finding)
    ]
    if not suspects:
        return findings
    before = comments(code)
    try:
        after, applied = apply_fixes(code, [findings[n] for n in suspects])
    except FixError:
        applied = []
    if applied and len(applied) == len(suspects) and lost_comments(before, after) == []:
        return findings  # together they keep every comment, so each one does
    result = list(findings)
    for number in suspects:
        result[number] = _checked(code, findings[number], before)
    return result


def _checked(code: str, finding: Finding, before: Counter[str] | None) -> Finding:
    """`finding`, its fix made unsafe if applying it alone deletes a comment."""
    try:
        after, applied = apply_fixes(code, [finding])
    except FixError:
        return finding  # it cannot be applied at all: nothing to demote
    lost = lost_comments(before, after) if applied else []
    if lost is None:
        return _unsafe(finding, "cannot check that it keeps the comments")
    if not lost:
        return finding
    shown = ", ".join(f"`{text}`" for text in lost[:_SHOWN_COMMENTS])
    more = f" and {len(lost) - _SHOWN_COMMENTS} more" if len(lost) > _SHOWN_COMMENTS else ""
    plural = "s" if len(lost) > 1 else ""
    return _unsafe(finding, f"it would delete the comment{plural} {shown}{more}")
