"""The full format's source snippet shows the code that was linted: standard input's own bytes
(not a file on disk that carries the --stdin-filename name), and in a long-lived process each
run's own files (a second run from another folder never shows the first run's lines)."""

from __future__ import annotations

import contextlib
import io
import subprocess

from lint_helpers import TRIO_LINT

import trio_lint.cli

BAD = "import pytrio as trio\n\nadam = trio.AdamParams(lr=1e-4)\n"


def test_stdin_snippets_come_from_the_input_not_a_file_of_that_name(tmp_path):
    (tmp_path / "agent.py").write_text("print(1)\nprint(2)\nprint(3)\n")
    done = subprocess.run(
        [TRIO_LINT, "--no-cache", "--stdin-filename", "agent.py", "-"],
        input=BAD,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "3 | adam = trio.AdamParams(lr=1e-4)" in done.stdout
    assert "print(3)" not in done.stdout


def _main_in(folder, *argv: str) -> str:
    out = io.StringIO()
    with contextlib.chdir(folder), contextlib.redirect_stdout(out):
        trio_lint.cli.main(list(argv))
    return out.getvalue()


def test_a_second_run_in_the_same_process_shows_its_own_lines(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    for folder, name in ((first, "adam"), (second, "other")):
        folder.mkdir()
        (folder / "train.py").write_text(BAD.replace("adam =", f"{name} ="))
    assert "3 | adam = trio.AdamParams" in _main_in(first, "--no-cache", "train.py")
    again = _main_in(second, "--no-cache", "train.py")
    assert "3 | other = trio.AdamParams" in again and "adam =" not in again
