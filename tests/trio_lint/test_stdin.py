"""Standard input: a one-file job of the same run as files.

Each mode (report, --fix, --diff, json, --add-noqa) and each kind --stdin-filename selects
(Python, Markdown, notebook), plus unparsable input, the excludes and per-file-ignores. The modes
run `main(argv)` in this process with the input as stdin's bytes (`run_main`); the bytes that
must come back unchanged (a BOM, CRLF) go through the console script's real stdin and stdout
pipes, as do the reads in test_cli.py.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.support.lint import BAD, CLEAN, FIXED, TRIO_LINT, run_main

MARKDOWN = (
    "Try this:\n\n```python\nimport pytrio as trio\n"
    "p = trio.SamplingParams(max_new_tokens=3)\n```\n"
)


def _notebook() -> str:
    code = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None}
    cells = [
        {**code, "source": ["import pytrio as trio\n"]},
        {"cell_type": "markdown", "metadata": {}, "source": ["Sampling:"]},
        {**code, "source": ["p = trio.SamplingParams(max_new_tokens=3)\n"]},
    ]
    document = {
        "cells": cells,
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(document, indent=1) + "\n"


def test_report_names_the_stdin_filename_like_a_file(project: Path) -> None:
    piped = run_main(
        "-", "--stdin-filename", "agent.py", "--output-format", "concise", cwd=project, stdin=BAD
    )
    # --stdin-filename with no paths reads stdin too (as ruff does); without it the name is `-`
    implicit = run_main("--stdin-filename", "agent.py", "-q", cwd=project, stdin=BAD)
    assert implicit.code == 1 and "agent.py:3:24: PTR202" in implicit.out
    unnamed = run_main("-", "--output-format", "concise", "-q", cwd=project, stdin=BAD)
    assert unnamed.out.startswith("-:3:24: PTR202")
    statistics = run_main("-", "--statistics", cwd=project, stdin=BAD)
    assert "PTR202\t[*] hf-lr" in statistics.out
    assert not (project / ".trio_lint_cache").exists()  # stdin is never cached
    (project / "agent.py").write_text(BAD)
    from_file = run_main("agent.py", "--output-format", "concise", cwd=project)
    assert piped.code == from_file.code == 1
    assert piped.out == from_file.out  # findings and the summary, on stdout as for a file
    assert piped.err == ""


def test_fix_writes_the_fixed_source_to_stdout_and_the_report_to_stderr(project: Path) -> None:
    fixed = run_main(
        "-", "--fix", "--show-fixes", "--stdin-filename", "agent.py", cwd=project, stdin=BAD
    )
    assert fixed.code == 1  # PTR301 has no fix and remains
    assert fixed.out == FIXED
    assert "agent.py:5:" in fixed.err and "PTR301" in fixed.err
    assert "Fixed 2 errors:" in fixed.err and "1 × PTR202 (hf-lr)" in fixed.err
    assert "Found 3 errors (2 fixed, 1 remaining)." in fixed.err
    assert not (project / "agent.py").exists()  # nothing written
    clean = run_main("-", "--fix", cwd=project, stdin=CLEAN)
    assert clean.code == 0 and clean.out == CLEAN and "All checks passed!" in clean.err
    # byte for byte: CRLF line ends and a BOM come back as they went in
    crlf = b"\xef\xbb\xbf" + BAD.replace("\n", "\r\n").encode()
    piped = subprocess.run(
        [TRIO_LINT, "-", "--fix", "-q"],
        cwd=project,
        input=crlf,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert piped.stdout == b"\xef\xbb\xbf" + FIXED.replace("\n", "\r\n").encode()


def test_diff_prints_a_unified_diff_against_the_stdin_filename(project: Path) -> None:
    diff = run_main("-", "--diff", "--stdin-filename", "agent.py", cwd=project, stdin=BAD)
    assert diff.code == 1
    lines = diff.out.splitlines()
    assert lines[:2] == ["--- a/agent.py", "+++ b/agent.py"]
    assert "-adam = trio.AdamParams(lr=1e-4)" in lines
    assert "+adam = trio.AdamParams(learning_rate=1e-4)" in lines
    assert diff.err == "Would fix 2 errors in 1 file(s).\n"
    nothing = run_main("-", "--diff", "--stdin-filename", "agent.py", cwd=project, stdin=CLEAN)
    assert nothing.code == 0 and nothing.out == ""


def test_json_carries_the_name_and_the_fix_edits(project: Path) -> None:
    result = run_main(
        "-", "--stdin-filename", "agent.py", "--output-format", "json", cwd=project, stdin=BAD
    )
    records = json.loads(result.out)
    assert {Path(r["filename"]).name for r in records} == {"agent.py"}
    rename = next(r for r in records if r["code"] == "PTR202")
    assert rename["fix"]["edits"][0]["content"] == "learning_rate"


def test_add_noqa_is_refused_for_stdin(project: Path) -> None:
    """ruff refuses `--add-noqa` with `--stdin-filename` too: it edits files in place."""
    for args in (("-",), ("--stdin-filename", "agent.py"), ("-", "--stdin-filename", "a.py")):
        refused = run_main("--add-noqa", *args, cwd=project, stdin=BAD)
        assert refused.code == 2 and refused.out == ""
        assert "--add-noqa cannot be used with standard input" in refused.err


def test_stdin_mixed_with_paths_is_an_error(project: Path) -> None:
    (project / "agent.py").write_text(BAD)
    mixed = run_main("-", "agent.py", cwd=project, stdin=BAD)
    assert mixed.code == 2 and "`-` (stdin) cannot be combined with other paths" in mixed.err
    named = run_main("--stdin-filename", "x.py", "agent.py", cwd=project, stdin=BAD)
    assert named.code == 2 and "--stdin-filename names standard input" in named.err


def test_unparsable_stdin_is_a_finding_and_fix_echoes_it(project: Path) -> None:
    broken = "import pytrio\ndef train(:\n"
    result = run_main("-", "--stdin-filename", "t.py", "--output-format", "concise", cwd=project,
                     stdin=broken)  # fmt: skip
    assert result.code == 1 and result.out.startswith("t.py:2:11: PTR900")
    fixed = run_main("-", "--fix", "--stdin-filename", "t.py", cwd=project, stdin=broken)
    assert fixed.code == 1 and fixed.out == broken and "PTR900" in fixed.err
    diff = run_main("-", "--diff", cwd=project, stdin=broken)
    assert diff.code == 0 and diff.out == ""


def test_markdown_from_stdin_is_fixed_in_place_of_its_block(project: Path) -> None:
    report = run_main("-", "--stdin-filename", "answer.md", "--output-format", "concise",
                     cwd=project, stdin=MARKDOWN)  # fmt: skip
    assert report.out.startswith("answer.md:5:25: PTR201")
    fixed = run_main("-", "--fix", "--stdin-filename", "answer.md", cwd=project, stdin=MARKDOWN)
    assert fixed.code == 0 and fixed.out == MARKDOWN.replace("max_new_tokens", "max_tokens")
    diff = run_main("-", "--diff", "--stdin-filename", "answer.md", cwd=project, stdin=MARKDOWN)
    assert diff.out.splitlines()[:2] == ["--- a/answer.md", "+++ b/answer.md"]
    assert "+p = trio.SamplingParams(max_tokens=3)" in diff.out.splitlines()


def test_notebook_from_stdin_reports_cells_and_prints_the_fixed_notebook(project: Path) -> None:
    notebook = _notebook()
    report = run_main("-", "--stdin-filename", "nb.ipynb", "--output-format", "concise",
                     cwd=project, stdin=notebook)  # fmt: skip
    assert report.out.startswith("nb.ipynb:cell 3:1:25: PTR201")
    fixed = run_main("-", "--fix", "--stdin-filename", "nb.ipynb", cwd=project, stdin=notebook)
    assert fixed.code == 0
    cells = json.loads(fixed.out)["cells"]
    assert cells[2]["source"] == ["p = trio.SamplingParams(max_tokens=3)\n"]
    assert cells[1]["source"] == ["Sampling:"]


def test_stdin_filename_meets_per_file_ignores_and_forced_excludes(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        "[project]\nname = 'p'\n\n[tool.trio-lint]\nextend-exclude = ['generated/']\n\n"
        "[tool.trio-lint.per-file-ignores]\n'scripts/*.py' = ['PTR202']\n"
    )
    ignored = run_main(
        "-", "--stdin-filename", "scripts/a.py", "--output-format", "json", cwd=project, stdin=BAD
    )
    assert {r["code"] for r in json.loads(ignored.out)} == {"PTR201", "PTR301"}
    excluded = run_main(
        "-", "--force-exclude", "--stdin-filename", "generated/a.py", cwd=project, stdin=BAD
    )
    assert excluded.code == 0
    echoed = run_main(
        "-", "--fix", "--force-exclude", "--stdin-filename", "generated/a.py", cwd=project,
        stdin=BAD,
    )  # fmt: skip
    assert echoed.code == 0 and echoed.out == BAD
    not_forced = run_main("-", "--stdin-filename", "generated/a.py", "-q", cwd=project, stdin=BAD)
    assert not_forced.code == 1


def test_code_without_the_sdk_is_passed_through(project: Path) -> None:
    plain = "print('no sdk here')\n"
    assert run_main("-", cwd=project, stdin=plain).code == 0
    echoed = run_main("-", "--fix", cwd=project, stdin=plain)
    assert echoed.code == 0 and echoed.out == plain
