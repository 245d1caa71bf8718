"""Bytes -> text -> `ast` tree, with the failures turned into typed errors that carry a position."""

from __future__ import annotations

import ast
import io
import re
import threading
import tokenize
import warnings
from dataclasses import dataclass

from trio_lint.lint.engine_codes import IO_ERROR, SYNTAX_ERROR
from trio_lint.run.fileio import MAX_FILE_BYTES

_NEWLINE = re.compile(r"\r\n|\r|\n")
# CPython 3.11 keeps the depth counter of its AST constructor in interpreter-wide state, so two
# threads parsing at once can fail with "SystemError: AST constructor recursion depth mismatch"
# although both sources are fine (https://github.com/python/cpython/issues/106905). trio-lint's
# own threads (the language server lints and fixes in two) take turns under this lock; a thread
# of another library in the same process can still collide, so that error is retried.
_AST_LOCK = threading.Lock()
_AST_ATTEMPTS = 3


@dataclass(frozen=True)
class SourceError(Exception):
    """Why a file could not be linted; `code` is PTR900 (syntax) or PTR901 (read/decode)."""

    code: str
    message: str
    line: int = 1
    column: int = 1

    def __str__(self) -> str:
        return self.message


def decode(data: bytes) -> tuple[str, bool]:
    """Decode source bytes as the interpreter would (BOM, PEP 263 cookie): (text, bom)."""
    if len(data) > MAX_FILE_BYTES:
        raise SourceError(
            IO_ERROR, f"file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB; skipped"
        )
    bom = data.startswith(b"\xef\xbb\xbf")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise SourceError(IO_ERROR, f"cannot determine the encoding: {exc.msg}") from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        line = data[: getattr(exc, "start", 0)].count(b"\n") + 1
        raise SourceError(IO_ERROR, f"not valid {encoding}: {exc}", line=line) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, bom


def parse_ast(text: str, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    """`ast.parse`, safe to call from several threads at once (see _AST_LOCK)."""
    for attempt in range(1, _AST_ATTEMPTS + 1):
        try:
            # The warning filters are the process's too: swapped under the same lock, so that
            # two of our threads never put back each other's copy.
            with _AST_LOCK, warnings.catch_warnings():
                warnings.simplefilter("ignore")  # invalid escape sequences etc. are not findings
                return ast.parse(text, filename=filename, mode=mode)
        except SystemError as exc:
            if "recursion depth mismatch" not in str(exc) or attempt == _AST_ATTEMPTS:
                raise
    raise AssertionError("unreachable")


def parses(text: str) -> bool:
    """Whether `text` is Python the interpreter can parse (a fenced block, an edited document)."""
    try:
        parse_ast(text)
    except (SyntaxError, ValueError):
        return False
    return True


def parse(text: str, filename: str = "<unknown>") -> ast.Module:
    try:
        tree = parse_ast(text, filename)
        assert isinstance(tree, ast.Module)
        return tree
    except SyntaxError as exc:
        line = exc.lineno or 1
        column = exc.offset or 1
        if exc.lineno is not None and exc.offset is not None:
            column = (
                _byte_offset_to_char(split_lines(text), line, exc.offset - 1, from_chars=True) + 1
            )
        raise SourceError(
            SYNTAX_ERROR, f"SyntaxError: {exc.msg}", line=line, column=column
        ) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise SourceError(SYNTAX_ERROR, f"cannot parse: {type(exc).__name__}: {exc}") from None


def split_lines(text: str) -> list[str]:
    """Lines as Python counts them (\\n, \\r\\n, \\r; form feed and U+2028 do not break)."""
    if "\r" not in text:
        return text.split("\n")
    return _NEWLINE.split(text)


def _byte_offset_to_char(
    lines: list[str], line: int, offset: int, *, from_chars: bool = False
) -> int:
    if from_chars or not (0 < line <= len(lines)):
        return max(offset, 0)
    text = lines[line - 1]
    if text.isascii():
        return offset
    return len(text.encode("utf-8")[:offset].decode("utf-8", "replace"))


class LineIndex:
    """Converts `ast` byte columns to 1-based character columns, splitting the text only once."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._lines: list[str] | None = None

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = split_lines(self._text)
        return self._lines

    def char_column(self, line: int, byte_col: int) -> int:
        return _byte_offset_to_char(self.lines, line, byte_col)

    def line_text(self, line: int) -> str:
        return self.lines[line - 1] if 0 < line <= len(self.lines) else ""
