"""Hover: a rule's documentation (as `trio-lint rule CODE` prints it) over a PTR code in a
`# noqa` comment, and over the range of a trio-lint diagnostic."""

from __future__ import annotations

import re
from collections.abc import Sequence

from trio_lint.lint import noqa
from trio_lint.output.diagnostics import Diagnostic

_CODE = re.compile(r"[A-Za-z]+[0-9]+")


def rule_doc(code: str) -> str | None:
    from trio_lint.output.explain import rule_markdown
    from trio_lint.rules import get_rule

    rule = get_rule(code)
    return rule_markdown(rule) if rule is not None else None


def noqa_code_at(line_text: str, character: int) -> tuple[str, int, int] | None:
    """(code, start, end) of the rule code under `character` in a noqa comment on this line."""
    directive = noqa.parse_line(line_text, 0)
    if directive is None or directive.codes is None:
        return None
    for match in _CODE.finditer(line_text, directive.start, directive.end):
        if match.start() <= character <= match.end() and match.group().upper().startswith("PTR"):
            return match.group().upper(), match.start(), match.end()
    return None


def diagnostics_at(
    diagnostics: Sequence[Diagnostic], cell: int | None, line: int, character: int
) -> list[Diagnostic]:
    """Diagnostics whose range holds the 0-based (line, character index)."""
    position = (line + 1, character + 1)
    return [
        d
        for d in diagnostics
        if d.cell == cell and (d.line, d.column) <= position <= (d.end_line, d.end_column)
    ]


def hover_text(codes: Sequence[str]) -> str | None:
    docs = []
    for code in dict.fromkeys(codes):
        doc = rule_doc(code)
        docs.append(doc if doc is not None else f"`{code}`: no such trio-lint rule.")
    return "\n\n---\n\n".join(docs) if docs else None
