"""lint_source/fix_source with a project root (per-file-ignores, as the CLI applies them) and
with fix edits (what the language server's quick fixes apply)."""

from __future__ import annotations

from pathlib import Path

from trio_lint import fix_source, lint_source

CODE = "import pytrio as trio\n\nadam = trio.AdamParams(lr=1e-4)\n"
CONFIG = {"per-file-ignores": {"scripts/*": ["PTR202"]}}


def test_root_applies_per_file_ignores(tmp_path: Path):
    ignored, kept = tmp_path / "scripts" / "a.py", tmp_path / "pkg" / "a.py"
    assert lint_source(CODE, ignored, CONFIG, root=tmp_path) == []
    assert [d.code for d in lint_source(CODE, kept, CONFIG, root=tmp_path)] == ["PTR202"]
    # Without a root the patterns have nothing to be relative to (the behaviour so far).
    assert [d.code for d in lint_source(CODE, ignored, CONFIG)] == ["PTR202"]
    assert not fix_source(CODE, ignored, CONFIG, root=tmp_path).changed
    assert fix_source(CODE, kept, CONFIG, root=tmp_path).changed


def test_edits_reproduce_the_fix():
    (plain,) = lint_source(CODE, "train.py")
    assert plain.fix is not None and plain.fix.edits == ()
    (diagnostic,) = lint_source(CODE, "train.py", edits=True)
    (edit,) = diagnostic.fix.edits
    lines = CODE.splitlines(keepends=True)
    start = sum(map(len, lines[: edit.location.row - 1])) + edit.location.column - 1
    end = sum(map(len, lines[: edit.end_location.row - 1])) + edit.end_location.column - 1
    assert CODE[:start] + edit.content + CODE[end:] == fix_source(CODE, "train.py").source
