"""Input kinds: a file becomes one or more Python `Unit`s plus the way back to the file's own
coordinates (Markdown line, notebook cell) and bytes (for fixes). The kinds live in the submodules;
`base.py` holds what they share."""

from __future__ import annotations

from trio_lint.lint.parse import SourceError
from trio_lint.sources.base import SUFFIX_KINDS, Document, Unit, kind_of


def load_document(path: str, data: bytes) -> Document:
    """Raises SourceError for content that cannot be read as its kind."""
    from trio_lint.sources.markdown import MarkdownDocument
    from trio_lint.sources.notebook import NotebookDocument
    from trio_lint.sources.python import PythonDocument

    kind = kind_of(path) or "python"
    if kind == "notebook":
        return NotebookDocument.load(data)
    if kind == "markdown":
        return MarkdownDocument.load(data)
    return PythonDocument.load(data)


__all__ = ["SUFFIX_KINDS", "Document", "SourceError", "Unit", "kind_of", "load_document"]
