"""Properties of the server's position handling on arbitrary text (any line breaks, characters
outside the BMP): every diagnostic range points into the document, and the edit computed for a
change turns the old text into the new one exactly."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types

from trio_lint.server.config_watch import Settings
from trio_lint.server.diagnostics import by_document, lint
from trio_lint.server.documents import python_target, replace_all
from trio_lint.settings.config import LintConfig

ENCODINGS = [
    types.PositionEncodingKind.Utf8,
    types.PositionEncodingKind.Utf16,
    types.PositionEncodingKind.Utf32,
]
BREAK = re.compile(r"\r\n|\r|\n")
# Text made of the pieces that trip position code up: every kind of line break, form feeds,
# tabs, and characters that take 2 UTF-16 units or 4 UTF-8 bytes.
TRICKY = st.lists(
    st.sampled_from(["a", "lr", "=", "(", ")", " ", "\t", "\n", "\r", "\r\n", "\x0c",
                     "\u2028", "é", "🙂", "#", "'", "noqa", ":", "PTR202"]),
    max_size=30,
).map("".join)  # fmt: skip


def units(text: str, encoding: str) -> int:
    if encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8"))
    if encoding == types.PositionEncodingKind.Utf16:
        return len(text.encode("utf-16-le")) // 2
    return len(text)


def lines_of(text: str) -> list[str]:
    return BREAK.split(text)


def offset(text: str, position: types.Position, encoding: str) -> int:
    starts = [0] + [match.end() for match in BREAK.finditer(text)]
    start = starts[position.line]
    line = lines_of(text)[position.line]
    for index in range(len(line) + 1):
        if units(line[:index], encoding) == position.character:
            return start + index
    raise AssertionError(f"{position} is inside a character")


SETTINGS = Settings(LintConfig(), Path.cwd(), None)


def _programs() -> st.SearchStrategy[str]:
    """hypothesmith's programs from Python's grammar, built when first drawn: importing it and
    building the grammar take seconds, which every pytest worker would pay at collection."""
    import hypothesmith

    return hypothesmith.from_grammar()


@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # generated code such as `1()`
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(TRICKY, st.deferred(_programs), st.text(max_size=80)),
    st.sampled_from(ENCODINGS),
)
def test_every_diagnostic_range_points_into_the_document(body: str, encoding: str):
    text = "import pytrio as trio\nadam = trio.AdamParams(lr=1e-4)\n" + body
    target = python_target("file:///tmp/t.py", "/tmp/t.py", text, 1)
    outcome = lint(target, SETTINGS)
    assert outcome.error is None, outcome.error
    published = by_document(target, outcome.diagnostics, encoding)
    assert list(published) == ["file:///tmp/t.py"]
    lines = lines_of(text)
    for item in published["file:///tmp/t.py"]:
        for position in (item.range.start, item.range.end):
            assert 0 <= position.line < len(lines)
            assert 0 <= position.character <= units(lines[position.line], encoding)
            offset(text, position, encoding)  # never between the units of one character
        assert (item.range.start.line, item.range.start.character) <= (
            item.range.end.line,
            item.range.end.character,
        )


@settings(max_examples=300, deadline=None)
@given(TRICKY, TRICKY, st.sampled_from(ENCODINGS))
def test_the_edit_for_a_change_reproduces_the_new_text(old: str, new: str, encoding: str):
    edit = replace_all(old, new, encoding)
    if old == new:
        assert edit is None
        return
    start = offset(old, edit.range.start, encoding)
    end = offset(old, edit.range.end, encoding)
    assert old[:start] + edit.new_text + old[end:] == new
