"""What the server lints: a Python text document, or a notebook whose cells are separate text
documents. A notebook is linted as the CLI lints an .ipynb file (code cells joined, imports of one
cell seen by the next), and its findings are sent back to the cell they point into.

Positions: trio-lint reports 1-based lines and 1-based columns counted in characters; LSP wants
0-based lines and columns in the negotiated encoding (UTF-16 unless the client offers another)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath

from lsprotocol import types

from trio_lint.server.pygls_adapter import codec

PYTHON_SUFFIXES = frozenset({".py", ".pyi"})
_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # the line breaks LSP counts (str.splitlines counts more)


def split_lines(text: str) -> list[str]:
    """The lines of `text` as LSP numbers them, without their line breaks."""
    return _LINE_BREAK.split(text)


@dataclass(frozen=True)
class Cell:
    uri: str
    number: int  # 1-based position among all the notebook's cells (trio-lint's `cell`)
    code: bool
    text: str


@dataclass(frozen=True)
class Target:
    """One lint: `source` and `path` go to trio-lint (`path` decides the kind and the config)."""

    key: str  # the text document's or the notebook's URI
    path: str
    source: str
    version: int | None
    cells: tuple[Cell, ...] | None = None  # None for a Python file

    def text_of(self, cell: int | None) -> tuple[str, str] | None:
        """(uri, text) of the document a finding with this `cell` points into."""
        if self.cells is None:
            return self.key, self.source
        for candidate in self.cells:
            if candidate.number == cell:
                return candidate.uri, candidate.text
        return None

    def cell_of(self, uri: str) -> int | None:
        for candidate in self.cells or ():
            if candidate.uri == uri:
                return candidate.number
        return None

    def uris(self) -> list[str]:
        """Every document that receives diagnostics from this target."""
        if self.cells is None:
            return [self.key]
        return [cell.uri for cell in self.cells if cell.code]


def is_python(path: str, language_id: str | None) -> bool:
    return language_id == "python" or PurePath(path).suffix.lower() in PYTHON_SUFFIXES


def python_target(uri: str, path: str, text: str, version: int | None) -> Target:
    return Target(key=uri, path=path, source=text, version=version)


def notebook_target(
    uri: str, path: str, version: int | None, cells: Sequence[tuple[str, bool, str]]
) -> Target:
    """`cells`: (uri, is code, text) in notebook order. The source is the notebook as .ipynb JSON,
    so trio-lint reads it exactly as it reads the file on disk."""
    built = tuple(
        Cell(uri=cell_uri, number=number, code=code, text=text)
        for number, (cell_uri, code, text) in enumerate(cells, start=1)
    )
    notebook = {
        "cells": [
            {
                "cell_type": "code" if cell.code else "markdown",
                "metadata": {},
                "source": cell.text,
                **({"outputs": [], "execution_count": None} if cell.code else {}),
            }
            for cell in built
        ],
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    if PurePath(path).suffix.lower() != ".ipynb":
        path = f"{path}.ipynb"  # the suffix tells trio-lint the kind
    return Target(
        key=uri, path=path, source=json.dumps(notebook, indent=1), version=version, cells=built
    )


def cell_sources(notebook_json: str) -> list[str]:
    """The text of every cell of a notebook that `notebook_target` built (after fix_source)."""
    cells = json.loads(notebook_json)["cells"]
    return [
        "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        for cell in cells
    ]


# --- positions ----------------------------------------------------------------------------------


def _units(text: str, encoding: str) -> int:
    return codec(encoding).client_num_units(text)


def to_position(lines: Sequence[str], line: int, column: int, encoding: str) -> types.Position:
    """A trio-lint (1-based line, 1-based character column) as an LSP position (clamped)."""
    row = min(max(line - 1, 0), max(len(lines) - 1, 0))
    if line - 1 >= len(lines):
        return types.Position(line=row, character=_units(lines[row], encoding) if lines else 0)
    text = lines[row] if lines else ""
    return types.Position(line=row, character=_units(text[: max(column - 1, 0)], encoding))


def to_range(
    lines: Sequence[str], start: tuple[int, int], end: tuple[int, int], encoding: str
) -> types.Range:
    """A trio-lint span, (line, column) to (line, column), 1-based, as an LSP range."""
    return types.Range(
        start=to_position(lines, *start, encoding), end=to_position(lines, *end, encoding)
    )


def from_position(lines: Sequence[str], position: types.Position, encoding: str) -> tuple[int, int]:
    """An LSP position as (0-based line, 0-based character index into that line)."""
    if not lines or position.line >= len(lines):
        return len(lines), 0
    text = lines[position.line]
    found = codec(encoding)
    if position.character >= found.client_num_units(text):
        return position.line, len(text)  # pygls would answer one character short of the end
    # A copy: pygls may change the position it is given.
    inside = types.Position(line=0, character=position.character)
    return position.line, found.position_from_client_units([text], inside).character


def offset_of(text: str, line: int, character: int) -> int:
    """The index into `text` of a 0-based (line, character index)."""
    offset = 0
    for _ in range(line):
        match = _LINE_BREAK.search(text, offset)
        if match is None:
            return len(text)
        offset = match.end()
    return offset + character


def replace_all(uri_text: str, new_text: str, encoding: str) -> types.TextEdit | None:
    """The smallest single edit that turns `uri_text` into `new_text` (None when equal)."""
    if uri_text == new_text:
        return None
    start = 0
    limit = min(len(uri_text), len(new_text))
    while start < limit and uri_text[start] == new_text[start]:
        start += 1
    end_old, end_new = len(uri_text), len(new_text)
    while end_old > start and end_new > start and uri_text[end_old - 1] == new_text[end_new - 1]:
        end_old -= 1
        end_new -= 1
    # A "\r\n" must not be cut in two: LSP positions cannot point between its characters.
    if 0 < start < len(uri_text) and uri_text[start - 1 : start + 1] == "\r\n":
        start -= 1
    if 0 < end_old < len(uri_text) and uri_text[end_old - 1 : end_old + 1] == "\r\n":
        end_old += 1
        end_new += 1
    return types.TextEdit(
        range=types.Range(
            start=_offset_position(uri_text, start, encoding),
            end=_offset_position(uri_text, end_old, encoding),
        ),
        new_text=new_text[start:end_new],
    )


def _offset_position(text: str, offset: int, encoding: str) -> types.Position:
    before = text[:offset]
    line = len(_LINE_BREAK.findall(before))
    last_break = max(before.rfind("\n"), before.rfind("\r"))
    return types.Position(line=line, character=_units(before[last_break + 1 :], encoding))
