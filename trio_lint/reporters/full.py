"""The default format: location, code, message, the source line with a caret, the fix hint."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from trio_lint.lint.parse import split_lines
from trio_lint.output.diagnostics import Diagnostic
from trio_lint.reporters import fixable_mark, location_prefix


def _lines(path: str, cell: int | None, texts: Mapping[str, bytes]) -> list[str]:
    data = texts.get(path)
    if data is None:
        try:
            data = Path(path).read_bytes()
        except OSError:
            return []
    if cell is not None:
        try:
            source = json.loads(data)["cells"][cell - 1].get("source", "")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            return []
        return split_lines("".join(source) if isinstance(source, list) else str(source))
    return split_lines(data.decode("utf-8-sig", "replace"))


def _snippet(diagnostic: Diagnostic, lines: list[str]) -> list[str]:
    if not (0 < diagnostic.line <= len(lines)):
        return []
    text = lines[diagnostic.line - 1].replace("\t", " ")
    gutter = " " * len(str(diagnostic.line))
    start = max(diagnostic.column - 1, 0)
    if diagnostic.end_line == diagnostic.line and diagnostic.end_column > diagnostic.column:
        width = diagnostic.end_column - diagnostic.column
    else:
        width = max(len(text.rstrip()) - start, 1)
    return [
        f"{gutter} |",
        f"{diagnostic.line} | {text.rstrip()}",
        f"{gutter} | {' ' * start}{'^' * width} {diagnostic.code}",
        f"{gutter} |",
    ]


def render(diagnostics: Sequence[Diagnostic], texts: Mapping[str, bytes] | None = None) -> str:
    """`texts`: the bytes linted under a name that is not (or not that) file on disk, such as
    standard input under --stdin-filename. Other files are read once per call: a long-lived
    caller (an editor, a test calling main twice) never sees another run's lines."""
    out: list[str] = []
    known = texts or {}
    lines: dict[tuple[str, int | None], list[str]] = {}
    for d in diagnostics:
        out.append(f"{location_prefix(d)}: {d.code} {fixable_mark(d)}{d.message}")
        key = (d.path, d.cell)
        if key not in lines:
            lines[key] = _lines(d.path, d.cell, known)
        out.extend(_snippet(d, lines[key]))
        if d.fix is not None:
            unsafe = " (unsafe: needs --unsafe-fixes)" if d.fix.applicability == "unsafe" else ""
            out.append(f"  = help: {d.fix.message}{unsafe}")
        out.append("")
    return "\n".join(out) + ("\n" if out else "")
