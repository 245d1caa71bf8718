"""`# noqa` directives: parse, suppress, find the unused ones, and add new ones (--add-noqa)."""

from __future__ import annotations

import re
from dataclasses import dataclass

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
        merged = sorted({*directive.codes, *codes})  # type: ignore[misc]
        return f"{text[: directive.start]}# noqa: {', '.join(merged)}{text[directive.end :]}"
    stripped = text.rstrip()
    return f"{stripped}  # noqa: {', '.join(sorted(set(codes)))}{text[len(stripped) :]}"
