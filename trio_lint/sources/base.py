"""Input kinds: a file becomes one or more Python `Unit`s plus the way back to the file's own
coordinates (Markdown line, notebook cell) and bytes (for fixes)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePath


@dataclass
class Unit:
    """Python code to lint, with its offset in the document."""

    code: str
    line_offset: int = 0  # Markdown: lines before the block
    column_offset: int = 0  # Markdown: indentation of an indented fence
    # Notebook: for each code line (index line-1) the (cell number, line in cell).
    cell_lines: list[tuple[int, int]] | None = None
    inherit_imports: bool = False  # Markdown: later blocks see imports of earlier ones


@dataclass
class Document:
    kind: str  # "python" | "notebook" | "markdown"
    units: list[Unit] = field(default_factory=list)

    def display(self, unit: Unit, line: int, column: int) -> tuple[int, int, int | None]:
        """(line, column, cell) as the user sees them."""
        if unit.cell_lines is not None:
            if 0 < line <= len(unit.cell_lines):
                cell, cell_line = unit.cell_lines[line - 1]
                return cell_line, column, cell
            return line, column, None
        return line + unit.line_offset, column + (unit.column_offset if column > 0 else 0), None

    def rebuild(self, codes: list[str]) -> bytes:
        raise NotImplementedError


SUFFIX_KINDS = {".py": "python", ".pyi": "python", ".ipynb": "notebook", ".md": "markdown"}


def kind_of(path: str) -> str | None:
    suffix = PurePath(path).suffix.lower()
    if suffix in (".markdown", ".mdx"):
        return "markdown"
    return SUFFIX_KINDS.get(suffix)
