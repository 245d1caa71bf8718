"""The command line end to end: exit codes, output formats, fixes, selection, stdin, rules.

The exit codes and standard input go through the console script as a real process; the rest
calls `main(argv)` in this process (`run_main`), where the process boundary is not the point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.lint import BAD, CLEAN, FIXED, run_cli, run_main

BIN = Path(sys.executable).parent


def test_exit_codes(project: Path) -> None:
    (project / "bad.py").write_text(BAD)
    (project / "clean.py").write_text(CLEAN)
    assert run_cli("clean.py", cwd=project).code == 0
    assert run_cli("bad.py", cwd=project).code == 1
    assert run_cli("bad.py", "--exit-zero", cwd=project).code == 0
    assert run_cli("--no-such-option", cwd=project).code == 2
    missing = run_cli("nope.py", cwd=project)
    assert missing.code == 2 and "nope.py" in missing.err
    unknown = run_cli("bad.py", "--select", "PTR999", cwd=project)
    assert unknown.code == 2 and "PTR999" in unknown.err and "select" in unknown.err


def test_empty_directory_is_clean(project: Path) -> None:
    (project / "examples").mkdir()
    result = run_main("examples", cwd=project)
    assert result.code == 0 and "All checks passed!" in result.out


def test_full_output_shows_line_caret_and_help(project: Path) -> None:
    (project / "bad.py").write_text(BAD)
    out = run_main("bad.py", "--no-cache", cwd=project).out
    assert "bad.py:3:24: PTR202 [*] `AdamParams` has no `lr`" in out
    assert "3 | adam = trio.AdamParams(lr=1e-4)" in out
    assert "  |                        ^^^^^^^ PTR202" in out
    assert "= help: Rename to `learning_rate`" in out
    assert "Found 3 errors." in out and "[*] 2 fixable with the `--fix` option." in out


def test_concise_and_sorted(project: Path) -> None:
    (project / "b.py").write_text(BAD)
    (project / "a.py").write_text(BAD)
    lines = run_main(".", "--output-format", "concise", "-q", cwd=project).out.splitlines()
    assert lines[:3] == [
        "a.py:3:24: PTR202 [*] `AdamParams` has no `lr`; the PyTRIO name is `learning_rate`",
        "a.py:4:30: PTR201 [*] `SamplingParams` has no `max_new_tokens`; the PyTRIO name is"
        " `max_tokens`",
        "a.py:5:32: PTR301 `-100` in `model_input`: PyTRIO rejects it as an out-of-vocabulary"
        " token",
    ]
    assert [line.split(":")[0] for line in lines] == ["a.py"] * 3 + ["b.py"] * 3
    assert not any(line.startswith(("Found", "[*]")) for line in lines)  # --quiet: findings only


def test_json_has_ruffs_record_shape(project: Path) -> None:
    (project / "bad.py").write_text(BAD)
    records = json.loads(run_main("bad.py", "--output-format", "json", cwd=project).out)
    ruff_keys = {
        "cell",
        "code",
        "end_location",
        "filename",
        "fix",
        "location",
        "message",
        "noqa_row",
        "url",
    }
    assert all(ruff_keys <= set(record) for record in records)
    first = records[0]
    assert first["code"] == "PTR202" and first["location"] == {"column": 24, "row": 3}
    assert first["end_location"] == {"column": 31, "row": 3}
    assert first["filename"] == str((project / "bad.py").resolve())
    assert first["fix"]["applicability"] == "safe"
    assert first["fix"]["edits"] == [
        {
            "content": "learning_rate",
            "location": {"row": 3, "column": 24},
            "end_location": {"row": 3, "column": 26},
        }
    ]
    assert records[2]["fix"] is None


def _shape(value: object) -> object:
    """The key structure of a JSON value (types for leaves, first item for lists)."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    return type(value).__name__


def test_json_records_have_the_same_shape_as_real_ruff(project: Path) -> None:
    (project / "r.py").write_text("import os\n")
    (project / "bad.py").write_text(BAD)
    ruff = subprocess.run(
        [
            BIN / "ruff",
            "check",
            "--isolated",
            "--no-cache",
            "--select",
            "F401",
            "--output-format",
            "json",
            "r.py",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    (theirs,) = json.loads(ruff.stdout)
    ours = json.loads(run_main("bad.py", "--output-format", "json", cwd=project).out)[0]
    # ruff's `url` is null for codes without a docs page (as syntax errors); ours are documented
    # by `trio-lint rule CODE` instead.
    assert ours.pop("url") is None
    theirs.pop("url")
    assert _shape(ours) == _shape(theirs)


def test_github_annotations(project: Path) -> None:
    (project / "bad.py").write_text(BAD)
    out = run_main("bad.py", "--output-format", "github", cwd=project).out.splitlines()
    assert out[0] == (
        "::error title=trio-lint (PTR202),file=bad.py,line=3,col=24,endLine=3,endColumn=31::"
        "bad.py:3:24: PTR202 `AdamParams` has no `lr`; the PyTRIO name is `learning_rate`"
    )


def test_fix_writes_converges_and_show_fixes(project: Path) -> None:
    target = project / "bad.py"
    target.write_text(BAD)
    result = run_main("bad.py", "--fix", "--show-fixes", cwd=project)
    assert result.code == 1  # the -100 finding has no fix and remains
    assert target.read_text() == FIXED
    assert "Fixed 2 errors:" in result.out and "1 × PTR201 (hf-max-new-tokens)" in result.out
    assert "Found 3 errors (2 fixed, 1 remaining)." in result.out
    again = run_main("bad.py", "--fix", cwd=project)
    assert target.read_text() == FIXED and "Found 1 error." in again.out


def test_diff_writes_nothing(project: Path) -> None:
    target = project / "bad.py"
    target.write_text(BAD)
    result = run_main("bad.py", "--diff", cwd=project)
    assert result.code == 1
    assert target.read_text() == BAD
    assert result.out.startswith("--- a/bad.py\n+++ b/bad.py\n")
    assert "\n-adam = trio.AdamParams(lr=1e-4)\n" in result.out
    assert "\n+adam = trio.AdamParams(learning_rate=1e-4)\n" in result.out
    assert "Would fix 2 errors" in result.err
    (project / "clean.py").write_text(CLEAN)
    assert run_main("clean.py", "--diff", cwd=project).code == 0


def test_unsafe_fixes_need_the_flag(project: Path) -> None:
    code = "from pytrio import Datum\nDatum = Datum\n"
    target = project / "shadow.py"
    target.write_text(code)
    result = run_main("shadow.py", "--select", "PTR001", "--fix", cwd=project)
    assert target.read_text() == code
    assert "hidden fixes can be enabled with the `--unsafe-fixes` option" in result.out
    run_main("shadow.py", "--select", "PTR001", "--fix", "--unsafe-fixes", cwd=project)
    assert target.read_text() == "import pytrio as trio\nDatum = trio.Datum\n"


def test_statistics(project: Path) -> None:
    (project / "a.py").write_text(BAD)
    (project / "b.py").write_text(BAD)
    out = run_main(".", "--statistics", cwd=project).out
    assert "2\tPTR201\t[*] hf-max-new-tokens" in out
    assert "2\tPTR301\t    minus-100-mask" in out


def test_select_ignore_extend_select_by_prefix(project: Path) -> None:
    (project / "bad.py").write_text(BAD)

    def codes(*args: str) -> set[str]:
        out = run_main("bad.py", "--output-format", "json", *args, cwd=project).out
        return {record["code"] for record in json.loads(out)}

    assert codes("--select", "PTR2") == {"PTR201", "PTR202"}
    assert codes("--ignore", "PTR201,PTR3") == {"PTR202"}
    assert codes("--select", "PTR301", "--extend-select", "hf-lr") == {"PTR202", "PTR301"}


def test_stdin(project: Path) -> None:
    result = run_cli(
        "-", "--stdin-filename", "agent.py", "--output-format", "concise", cwd=project, stdin=BAD
    )
    assert result.code == 1 and result.out.startswith("agent.py:3:24: PTR202")
    fixed = run_cli("-", "--fix", "--stdin-filename", "agent.py", cwd=project, stdin=BAD)
    assert fixed.out == FIXED and "PTR301" in fixed.err
    markdown = (
        "Try this:\n\n```python\nimport pytrio as trio\n"
        "p = trio.SamplingParams(max_new_tokens=3)\n```\n"
    )
    answer = run_cli(
        "-",
        "--stdin-filename",
        "answer.md",
        "--output-format",
        "concise",
        cwd=project,
        stdin=markdown,
    )
    assert answer.out.startswith("answer.md:5:25: PTR201")


def test_rule_explain_and_catalogue(project: Path) -> None:
    doc = run_main("rule", "PTR201", cwd=project)
    assert doc.code == 0
    for heading in (
        "# hf-max-new-tokens (PTR201)",
        "## What it does",
        "## Why is this bad?",
        "## Fix safety",
    ):
        assert heading in doc.out
    by_name = run_main("rule", "hf-max-new-tokens", cwd=project)
    assert by_name.out == doc.out
    table = run_main("rule", "--all", cwd=project).out.splitlines()
    assert table[0].split() == ["code", "name", "default", "severity", "fix"]
    assert any(line.split()[:3] == ["PTR001", "from-import", "on"] for line in table)
    assert any(line.split()[:3] == ["PTR210", "train-unembed-default", "off"] for line in table)
    assert any(line.split()[:3] == ["PTR201", "hf-max-new-tokens", "on"] for line in table)
    catalogue = json.loads(run_main("rule", "--all", "--output-format", "json", cwd=project).out)
    entry = next(item for item in catalogue if item["code"] == "PTR202")
    assert entry["name"] == "hf-lr" and entry["fix_safety"] == "safe"
    assert "## Why is this bad?" in entry["explanation"]
    missing = run_main("rule", "PTR999", cwd=project)
    assert missing.code == 2 and "PTR999" in missing.err


def test_in_process_runs_match_the_console_script_and_leave_the_process_as_it_was(
    project: Path,
) -> None:
    """`run_main`, which most of these tests use, sees what the console script's user sees, and
    a run in this process leaves no trace in it (directory, streams, signal handlers)."""
    import signal

    (project / "bad.py").write_text(BAD)
    for args in (("bad.py", "--no-cache"), ("--no-such-option",), ("rule", "PTR999")):
        assert run_main(*args, cwd=project) == run_cli(*args, cwd=project), args
    version = run_main("--version", cwd=project)  # argparse exits through SystemExit
    assert version.code == 0 and version.out.startswith("trio-lint ")
    before = (Path.cwd(), sys.stdout, sys.stderr, sys.stdin, signal.getsignal(signal.SIGTERM))
    fixed = run_main("bad.py", "--fix", cwd=project)  # a writing run installs SIGTERM handlers
    assert fixed.code == 1 and (project / "bad.py").read_text() == FIXED
    after = (Path.cwd(), sys.stdout, sys.stderr, sys.stdin, signal.getsignal(signal.SIGTERM))
    assert after == before


def test_the_version_is_the_distributions(project: Path) -> None:
    # One version: trio_lint/output/version.py, what `--version` prints, equal to pyproject.toml's.
    import tomllib

    import trio_lint
    from trio_lint.output.version import __version__

    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    declared = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]
    assert __version__ == trio_lint.__version__ == declared
    assert run_main("--version", cwd=project).out == f"trio-lint {declared}\n"
