"""The full format's source snippet shows the code that was linted: standard input's own bytes
(not a file on disk that carries the --stdin-filename name), and in a long-lived process each
run's own files (a second run from another folder never shows the first run's lines)."""

from __future__ import annotations

from tests.support.lint import run_cli, run_main

SCRIPT = "import pytrio as trio\n\nadam = trio.AdamParams(lr=1e-4)\n"


def test_stdin_snippets_come_from_the_input_not_a_file_of_that_name(tmp_path):
    (tmp_path / "agent.py").write_text("print(1)\nprint(2)\nprint(3)\n")
    done = run_cli("--no-cache", "--stdin-filename", "agent.py", "-", cwd=tmp_path, stdin=SCRIPT)
    assert done.code == 1, done.err
    assert "3 | adam = trio.AdamParams(lr=1e-4)" in done.out
    assert "print(3)" not in done.out


def test_a_second_run_in_the_same_process_shows_its_own_lines(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    for folder, name in ((first, "adam"), (second, "other")):
        folder.mkdir()
        (folder / "train.py").write_text(SCRIPT.replace("adam =", f"{name} ="))
    assert "3 | adam = trio.AdamParams" in run_main("--no-cache", "train.py", cwd=first).out
    again = run_main("--no-cache", "train.py", cwd=second).out
    assert "3 | other = trio.AdamParams" in again and "adam =" not in again
