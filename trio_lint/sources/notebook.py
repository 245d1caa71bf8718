"""Jupyter notebooks: the code cells joined into one unit (imports in cell 1 serve cell 5), with a
map back to (cell, line). IPython magics become comments while linting and are restored on write."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from trio_lint.parse import SourceError
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
        try:
            text = data.decode("utf-8-sig")
            notebook = json.loads(text)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise SourceError("PTR901", f"not a valid notebook (JSON): {exc}") from None
        cells = notebook.get("cells") if isinstance(notebook, dict) else None
        if not isinstance(cells, list):
            raise SourceError("PTR901", "not a valid notebook: no `cells` list")
        language = (notebook.get("metadata") or {}).get("language_info", {}).get("name", "python")
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
            raise SourceError("PTR901", "a fix changed the notebook's cell structure; not written")
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


def _cell_text(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)
