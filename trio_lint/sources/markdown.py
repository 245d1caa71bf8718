"""Markdown: every ```python fenced block that parses as a whole program is a unit reported at its
Markdown line; later blocks see the SDK imports of earlier ones (docs import once, then use `trio.`
in every snippet). A block that does not parse is an illustrative fragment (`...` bodies, a lone
call with a placeholder, a diff), not a broken script: it is skipped, never PTR900."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from trio_lint.lint.engine_codes import IO_ERROR
from trio_lint.lint.parse import SourceError, parses, split_lines
from trio_lint.sources.base import Document, Unit

_OPEN = re.compile(r"^(?P<indent>[ ]{0,3})(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\s]*)[^`]*$")
_PYTHON = {"python", "py", "python3", "py3", "pyi"}


@dataclass
class MarkdownDocument(Document):
    lines: list[str] = field(default_factory=list)
    newline: str = "\n"
    blocks: list[tuple[int, int, str]] = field(
        default_factory=list
    )  # (first, end) line index, indent
    bom: bool = False

    @classmethod
    def load(cls, data: bytes) -> MarkdownDocument:
        bom = data.startswith(b"\xef\xbb\xbf")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise SourceError(IO_ERROR, f"not valid UTF-8: {exc}") from None
        newline = "\r\n" if "\r\n" in text else "\n"
        lines = split_lines(text)
        document = cls(kind="markdown", lines=lines, newline=newline, bom=bom)
        index = 0
        while index < len(lines):
            match = _OPEN.match(lines[index])
            if not match:
                index += 1
                continue
            fence, indent = match.group("fence"), match.group("indent")
            close = re.compile(rf"^[ ]{{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
            end = index + 1
            while end < len(lines) and not close.match(lines[end]):
                end += 1
            if match.group("info").lower() in _PYTHON:
                body = [
                    line[len(indent) :] if line.startswith(indent) else line
                    for line in lines[index + 1 : end]
                ]
                if not parses("\n".join(body) + "\n"):
                    index = end + 1
                    continue
                document.blocks.append((index + 1, end, indent))
                document.units.append(
                    Unit(
                        "\n".join(body) + "\n",
                        line_offset=index + 1,
                        column_offset=len(indent),
                        inherit_imports=True,
                    )
                )
            index = end + 1
        return document

    def rebuild(self, codes: list[str]) -> bytes:
        lines = list(self.lines)
        for (first, end, indent), code in sorted(
            zip(self.blocks, codes, strict=True), key=lambda item: -item[0][0]
        ):
            body = code[:-1] if code.endswith("\n") else code
            lines[first:end] = [indent + line if line else line for line in body.split("\n")]
        text = self.newline.join(lines)
        return (b"\xef\xbb\xbf" if self.bom else b"") + text.encode("utf-8")
