"""`# noqa` directives: parse, suppress, find the unused ones, and add new ones (--add-noqa)."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass

from trio_lint.lint.engine_codes import ENGINE_CODES, NAMES, UNUSED_NOQA
from trio_lint.lint.findings import Finding, Fix, NodeEdit, Span
from trio_lint.lint.parse import LineIndex, parses
from trio_lint.output.diagnostics import Applicability, Severity

# As flake8/ruff: a bare noqa comment, or noqa + colon + codes (any case; comma/space separated).
NOQA = re.compile(
    r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE
)
_CODE = re.compile(r"[A-Z]+[0-9]+")


@dataclass(frozen=True)
class Directive:
    line: int
    codes: tuple[str, ...] | None  # None: a bare noqa, which suppresses everything on the line
    start: int  # character offsets of the directive in the line
    end: int

    def suppresses(self, code: str) -> bool:
        return self.codes is None or code in self.codes


def parse_line(text: str, line: int) -> Directive | None:
    if "noqa" not in text.lower():
        return None
    match = NOQA.search(text)
    if match is None:
        return None
    codes = match.group("codes")
    parsed = tuple(_CODE.findall(codes.upper())) if codes else None
    return Directive(line, parsed, match.start(), match.end())


def add_codes(text: str, codes: list[str]) -> str:
    """Append (or extend) a `# noqa: ...` on one physical line."""
    directive = parse_line(text, 0)
    if directive is not None and directive.codes is None:
        return text
    if directive is not None:
        merged = sorted({*directive.codes, *codes})  # type: ignore[misc]  # codes is set: a bare noqa returned above
        return f"{text[: directive.start]}# noqa: {', '.join(merged)}{text[directive.end :]}"
    stripped = text.rstrip()
    return f"{stripped}  # noqa: {', '.join(sorted(set(codes)))}{text[len(stripped) :]}"


def unused(code: str, index: LineIndex, used: dict[int, set[str]]) -> list[Finding]:
    from trio_lint.rules import rules_by_code  # the registry imports every rule module

    known = rules_by_code()
    found: list[Finding] = []
    try:
        comments = [
            tok
            for tok in tokenize.generate_tokens(io.StringIO(code).readline)
            if tok.type == tokenize.COMMENT
        ]
    except (tokenize.TokenError, SyntaxError):
        return found
    for tok in comments:
        line, col = tok.start
        directive = parse_line(tok.string, line)
        if directive is None or directive.codes is None:
            continue
        unused = [
            c for c in directive.codes if c.startswith("PTR") and c not in used.get(line, set())
        ]
        if not unused:
            continue
        keep = [c for c in directive.codes if c not in unused]
        text = index.line_text(line)
        byte_col = len(text[:col].encode())
        span = Span(line, byte_col, line, byte_col + len(tok.string.encode()))
        unknown = [c for c in unused if c not in known]
        detail = (
            f"unknown code{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}" if unknown else ""
        )
        message = f"Unused `noqa` directive ({', '.join(unused)}{'; ' + detail if detail else ''})"
        new_comment = _comment_without(tok.string, directive, keep)
        ws_col = len(text[:col].rstrip().encode())
        edit_span = Span(line, ws_col, line + 1, 0)
        fix = Fix(
            "Remove the unused codes",
            Applicability.SAFE,
            (NodeEdit(edit_span, "TrailingWhitespace", _set_comment(new_comment)),),
        )
        found.append(Finding(UNUSED_NOQA, span, message, Severity.WARNING, fix, NAMES[UNUSED_NOQA]))
    return found


def _set_comment(value: str | None):
    def transform(node):
        import libcst as cst  # only when the fix is applied: reporting it needs no libcst

        if value is None:
            return node.with_changes(whitespace=cst.SimpleWhitespace(""), comment=None)
        return node.with_changes(comment=cst.Comment(value))

    return transform


def _comment_without(comment: str, directive: Directive, keep: list[str]) -> str | None:
    before = comment[: directive.start].rstrip()
    after = comment[directive.end :]
    replacement = f"# noqa: {', '.join(keep)}" if keep else ""
    text = (before + ("  " if before and replacement else "") + replacement + after).rstrip()
    return text or None


_NEWLINE_KEEP = re.compile(r"(\r\n|\r|\n)")


def add_to_lines(code: str, findings: list[Finding]) -> str:
    """--add-noqa: a `# noqa: CODE` for every finding, unless the comment would land in a string."""
    by_line: dict[int, list[str]] = {}
    for finding in findings:
        if finding.code not in ENGINE_CODES:
            by_line.setdefault(finding.span.line, []).append(finding.code)
    if not by_line:
        return code
    parts = _NEWLINE_KEEP.split(code)  # [line, sep, line, sep, ..., line]
    for line, codes in by_line.items():
        position = (line - 1) * 2
        if position < len(parts):
            candidate = parts[:]
            candidate[position] = add_codes(parts[position], codes)
            if not parses("".join(candidate)):
                continue  # the line ends inside a string: a comment there would change the code
            parts = candidate
    return "".join(parts)
