"""Input kinds and awkward files: notebooks, Markdown, encodings, line endings, broken input."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.lint import BAD, FIXED, run_main
from trio_lint import fix_source, lint_source


def notebook(*cells: tuple[str, str]) -> str:
    return json.dumps(
        {
            "cells": [
                {"cell_type": kind, "metadata": {}, "source": text.splitlines(keepends=True)}
                | ({"outputs": [], "execution_count": None} if kind == "code" else {})
                for kind, text in cells
            ],
            "metadata": {"language_info": {"name": "python"}},
            "nbformat": 4,
            "nbformat_minor": 5,
        },
        indent=1,
    )


NOTEBOOK = notebook(
    ("markdown", "# Train\n"),
    ("code", "%pip install pytrio\nimport pytrio as trio\n"),
    (
        "code",
        "adam = trio.AdamParams(lr=1e-4)\n!ls\nparams = trio.SamplingParams(max_new_tokens=8)",
    ),
)


def test_notebook_reports_cell_and_line() -> None:
    found = [(d.code, d.cell, d.line, d.column) for d in lint_source(NOTEBOOK, "nb.ipynb")]
    assert found == [("PTR202", 3, 1, 24), ("PTR201", 3, 3, 30)]


def test_notebook_fix_keeps_magics_and_other_cells(project: Path) -> None:
    target = project / "nb.ipynb"
    target.write_text(NOTEBOOK)
    concise = run_main("nb.ipynb", "--output-format", "concise", "-q", cwd=project).out
    assert concise.splitlines()[0].startswith("nb.ipynb:cell 3:1:24: PTR202")
    full = run_main("nb.ipynb", "-q", cwd=project).out
    assert "1 | adam = trio.AdamParams(lr=1e-4)" in full
    assert run_main("nb.ipynb", "--fix", cwd=project).code == 0
    cells = json.loads(target.read_text())["cells"]
    assert "".join(cells[1]["source"]) == "%pip install pytrio\nimport pytrio as trio\n"
    assert "".join(cells[2]["source"]) == (
        "adam = trio.AdamParams(learning_rate=1e-4)\n!ls\n"
        "params = trio.SamplingParams(max_tokens=8)"
    )
    assert cells[0]["cell_type"] == "markdown"
    # Nothing else moved: same JSON layout, only the two fixed strings differ.
    expected = NOTEBOOK.replace("lr=1e-4", "learning_rate=1e-4").replace(
        "max_new_tokens=8", "max_tokens=8"
    )
    assert target.read_text() == expected


MARKDOWN = """# Sampling

```python
import pytrio as trio
```

Some text.

  ```py
  params = trio.SamplingParams(max_new_tokens=8)
  ```

```bash
pip install pytrio  # max_new_tokens=1
```
"""


def test_markdown_blocks_report_markdown_lines_and_share_imports(project: Path) -> None:
    found = [(d.code, d.line, d.column) for d in lint_source(MARKDOWN, "doc.md")]
    assert found == [("PTR201", 10, 32)]
    target = project / "doc.md"
    target.write_text(MARKDOWN)
    run_main("doc.md", "--fix", cwd=project)
    assert target.read_text() == MARKDOWN.replace("max_new_tokens=8", "max_tokens=8")


def test_markdown_fragments_are_skipped_never_ptr900(project: Path) -> None:
    """A block that is not a whole program (a fragment for illustration) is not a syntax error;
    the blocks around it are still checked, at their Markdown lines."""
    text = (
        "Intro\n\n```python\nimport pytrio as trio\n```\n\n```python\ndef broken(:\n```\n\n"
        "```python\nawait sampler.sample_async(prompt)\n```\n\n"
        "```python\nparams = trio.SamplingParams(max_new_tokens=8)\n```\n"
    )
    found = [(d.code, d.line) for d in lint_source(text, "a.md")]
    assert found == [("PTR201", 16)]
    (project / "a.md").write_text(text)
    proc = run_main("--no-cache", "--output-format", "concise", "a.md", cwd=project)
    assert "PTR900" not in proc.out and "a.md:16:" in proc.out


def test_markdown_in_directories_is_opt_in(project: Path) -> None:
    """ruff does not lint Markdown by default, and neither does a directory walk here; a named
    file, `markdown = true` or `--markdown` brings the blocks in."""
    (project / "docs").mkdir()
    (project / "docs" / "guide.md").write_text(MARKDOWN)
    assert run_main("--no-cache", ".", cwd=project).code == 0
    assert run_main("--no-cache", "--markdown", ".", cwd=project).code == 1
    assert run_main("--no-cache", "docs/guide.md", cwd=project).code == 1
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "\n[tool.trio-lint]\nmarkdown = true\n")
    assert run_main("--no-cache", ".", cwd=project).code == 1


def test_syntax_error_has_line_and_column() -> None:
    (diagnostic,) = lint_source("import pytrio\nx = (1,\ny = 2\n", "a.py")
    assert diagnostic.code == "PTR900" and diagnostic.line >= 2 and diagnostic.column >= 1
    (null,) = lint_source("import pytrio\nx = 1\0\n", "a.py")
    assert null.code == "PTR900"


def test_crlf_bom_tabs_form_feeds_are_kept_by_fixes(project: Path) -> None:
    source = BAD.replace("adam =", "\x0cadam =").replace("\n", "\r\n")
    source = source.replace("params =", "if True:\r\n\tparams =")
    target = project / "a.py"
    target.write_bytes(b"\xef\xbb\xbf" + source.encode())
    result = run_main("a.py", "--output-format", "concise", "-q", cwd=project)
    assert "a.py:3:25: PTR202" in result.out  # the form feed counts as one column
    assert "a.py:5:31: PTR201" in result.out  # so does the tab
    run_main("a.py", "--fix", cwd=project)
    data = target.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    expected = source.replace("lr=", "learning_rate=").replace("max_new_tokens", "max_tokens")
    assert data[3:].decode() == expected


def test_declared_encoding_and_undecodable_files(project: Path) -> None:
    latin = project / "latin.py"
    latin.write_bytes(
        b"# -*- coding: latin-1 -*-\nimport pytrio as trio\n"
        b"# caf\xe9\nadam = trio.AdamParams(lr=1)\n"
    )
    broken = project / "broken.py"
    broken.write_bytes(b"import pytrio\nname = '\xff\xfe'\n")
    empty = project / "empty.py"
    empty.write_bytes(b"")
    good = project / "good.py"
    good.write_text(BAD)
    result = run_main(".", "--output-format", "concise", "-q", "--force-sdk", cwd=project)
    lines = result.out.splitlines()
    assert (
        "latin.py:4:24: PTR202 [*] `AdamParams` has no `lr`; the PyTRIO name is `learning_rate`"
        in lines
    )
    assert any(line.startswith("broken.py:2:1: PTR901") and "utf-8" in line for line in lines)
    assert sum(line.startswith("good.py") for line in lines) == 3
    assert not any(line.startswith("empty.py") for line in lines)
    run_main("latin.py", "--fix", cwd=project)
    assert latin.read_bytes().endswith(b"# caf\xe9\nadam = trio.AdamParams(learning_rate=1)\n")


def test_huge_and_unreadable_files(project: Path) -> None:
    huge = project / "huge.py"
    huge.write_bytes(b"import pytrio\n" + b"x = 1\n" * 2_000_000)
    locked = project / "locked.py"
    locked.write_text(BAD)
    locked.chmod(0)
    (project / "good.py").write_text(BAD)
    result = run_main(".", "--output-format", "concise", "-q", cwd=project)
    assert any(line.startswith("huge.py:1:1: PTR901") for line in result.out.splitlines())
    assert result.out.count("good.py:") == 3
    locked.chmod(0o644)


def test_library_api_types() -> None:
    diagnostics = lint_source(BAD, path="agent.py")
    assert [d.code for d in diagnostics] == ["PTR202", "PTR201", "PTR301"]
    assert diagnostics[0].fixable and not diagnostics[2].fixable
    result = fix_source(BAD, path="agent.py")
    assert result.source == FIXED and result.changed
    assert [d.code for d in result.fixed] == ["PTR202", "PTR201"]
    assert [d.code for d in result.remaining] == ["PTR301"]
    selected = lint_source(BAD, path="agent.py", config={"select": ["PTR301"]})
    assert [d.code for d in selected] == ["PTR301"]


def test_unreadable_code_is_reported_whatever_is_selected() -> None:
    broken = "import pytrio\ndef f(:\n"
    assert [d.code for d in lint_source(broken, "a.py", {"select": ["PTR201"]})] == ["PTR900"]
    assert lint_source(broken, "a.py", {"select": ["PTR201"], "ignore": ["PTR900"]}) == []
