"""Jupyter notebooks: the code cells joined into one unit (imports in cell 1 serve cell 5), with a
map back to (cell, line). IPython magics become comments while linting and are restored on write."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from trio_lint.lint.engine_codes import IO_ERROR
from trio_lint.lint.parse import SourceError
from trio_lint.sources.base import Document, Unit

# A comment line separating cells in the joined code; fixes never touch comments that stand alone.
CELL_MARKER = "# %%trio-lint-cell%%"
_MAGIC_PREFIX = "# %%trio-lint-magic%% "
_MAGIC_STARTS = ("%", "!", "?")


@dataclass
class NotebookDocument(Document):
    notebook: dict[str, Any] = field(default_factory=dict)
    code_cells: list[int] = field(default_factory=list)  # indexes into notebook["cells"]
    indent: int | None = 1  # the file's own JSON layout, kept when writing fixes back
    trailing_newline: bool = True

    @classmethod
    def load(cls, data: bytes) -> NotebookDocument:
        """Raises SourceError (PTR901) naming what is wrong for any shape that is not a
        notebook's: JSON too deeply nested to read, no `cells` list, a `metadata` or
        `language_info` that is not a table, a code cell whose `source` is not text."""
        try:
            text = data.decode("utf-8-sig")
            notebook = json.loads(text)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise SourceError(IO_ERROR, f"not a valid notebook (JSON): {exc}") from None
        except RecursionError:
            raise SourceError(
                IO_ERROR, "not a valid notebook: its JSON is nested too deeply to read"
            ) from None
        cells = notebook.get("cells") if isinstance(notebook, dict) else None
        if not isinstance(cells, list):
            raise SourceError(IO_ERROR, "not a valid notebook: no `cells` list")
        language = _language(notebook)
        for number, cell in enumerate(cells, start=1):
            if isinstance(cell, dict) and cell.get("cell_type") == "code":
                _check_source(cell, number)
        second = text.split("\n", 2)[1] if text.count("\n") >= 2 else ""
        indent = len(second) - len(second.lstrip(" ")) if second.startswith(" ") else None
        document = cls(
            kind="notebook",
            notebook=notebook,
            indent=indent,
            trailing_newline=text.endswith("\n"),
        )
        if language != "python":
            return document  # R or Julia notebooks have nothing for us
        lines: list[str] = []
        cell_lines: list[tuple[int, int]] = []
        for number, cell in enumerate(cells, start=1):
            if not isinstance(cell, dict) or cell.get("cell_type") != "code":
                continue
            if document.code_cells:
                lines.append(CELL_MARKER)
                cell_lines.append((number, 0))
            document.code_cells.append(number - 1)
            for line_number, text in enumerate(_cell_text(cell).split("\n"), start=1):
                magic = text.lstrip().startswith(_MAGIC_STARTS) or text.rstrip().endswith("?")
                lines.append(_MAGIC_PREFIX + text if magic else text)
                cell_lines.append((number, line_number))
        if document.code_cells:
            document.units.append(Unit("\n".join(lines), cell_lines=cell_lines))
        return document

    def rebuild(self, codes: list[str]) -> bytes:
        if not self.units:
            return json.dumps(self.notebook).encode()
        pieces = codes[0].split("\n" + CELL_MARKER + "\n")
        if len(pieces) != len(self.code_cells):
            raise SourceError(IO_ERROR, "a fix changed the notebook's cell structure; not written")
        cells = self.notebook["cells"]
        for index, text in zip(self.code_cells, pieces, strict=True):
            restored = "\n".join(
                line.replace(_MAGIC_PREFIX, "", 1)
                if line.lstrip().startswith(_MAGIC_PREFIX)
                else line
                for line in text.split("\n")
            )
            if restored != _cell_text(cells[index]):
                cells[index]["source"] = restored.splitlines(keepends=True)
        text = json.dumps(self.notebook, indent=self.indent, ensure_ascii=False)
        return (text + ("\n" if self.trailing_newline else "")).encode("utf-8")


def _invalid(where: str, expected: str, got: object) -> SourceError:
    return SourceError(
        IO_ERROR, f"not a valid notebook: {where} must be {expected}, not {_json_type(got)}"
    )


def _json_type(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    return names.get(type(value), "a number")


def _language(notebook: dict[str, Any]) -> str:
    """`metadata.language_info.name` (python when absent); SourceError for the wrong shapes."""
    metadata = notebook.get("metadata")
    if metadata is None:
        return "python"
    if not isinstance(metadata, dict):
        raise _invalid("`metadata`", "an object", metadata)
    info = metadata.get("language_info")
    if info is None:
        return "python"
    if not isinstance(info, dict):
        raise _invalid("`metadata.language_info`", "an object", info)
    name = info.get("name", "python")
    if not isinstance(name, str):
        raise _invalid("`metadata.language_info.name`", "a string", name)
    return name


def _check_source(cell: dict[str, Any], number: int) -> None:
    source = cell.get("source", "")
    if isinstance(source, str):
        return
    if not isinstance(source, list):
        raise _invalid(f"cell {number}'s `source`", "a string or an array of strings", source)
    for line in source:
        if not isinstance(line, str):
            raise SourceError(
                IO_ERROR,
                f"not a valid notebook: cell {number}'s `source` must be a string or an array"
                f" of strings; it holds {_json_type(line)}",
            )


def _cell_text(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)
