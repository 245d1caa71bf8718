"""`--fix` never loses code: a safe fix keeps every comment (or is unsafe and says which it would
delete), a write never overwrites an edit made while the run was busy (compare and swap), a
symlink stays a symlink (its target is fixed), and no temporary file outlives the run, whatever
ends it: an error, an interrupt, a signal, or `kill -9` (the next run removes what it left).

The runs are in-process (`trio_lint.cli.main`, through `run_main`) where faults are injected by
patching the write path; the SIGTERM and kill -9 runs are real processes killed at the write."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trio_lint.run.invocation as runner
from tests.support.lint import BAD, FIXED, run_main
from trio_lint import fix_source
from trio_lint.rules import all_rules

COMMENTED_IMPORT = (
    "from pytrio import (  # SDK types\n"
    "    SamplingParams,  # sampling\n"
    "    AdamParams,  # optimiser\n"
    ")\n"
    "params = SamplingParams(max_tokens=4)\n"
    "adam = AdamParams(learning_rate=1e-4)\n"
)


def lint(project: Path, *args: str) -> tuple[int, str]:
    """trio-lint in this process, run from `project`: (exit code, stdout + stderr)."""
    run = run_main("--no-cache", *args, cwd=project)
    return run.code, run.out + run.err


def comments(code: str) -> Counter[str]:
    """The comments of `code`, counted (the test's own tokenizer pass, not trio-lint's)."""
    import io
    import tokenize

    tokens = tokenize.generate_tokens(io.StringIO(code).readline)
    return Counter(t.string.rstrip() for t in tokens if t.type == tokenize.COMMENT)


def temp_files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.rglob("*.tmp"))


# --- comments --------------------------------------------------------------------------------


def test_a_safe_fix_that_would_delete_comments_is_unsafe_and_names_them(project):
    target = project / "a.py"
    target.write_text(COMMENTED_IMPORT)
    code, out = lint(project, "--fix", "a.py")
    assert target.read_text() == COMMENTED_IMPORT  # nothing written
    assert code == 1
    assert "PTR001" in out and "(unsafe: it would delete the comments" in out
    for comment in ("# SDK types", "# sampling", "# optimiser"):
        assert f"`{comment}`" in out
    assert "1 hidden fixes can be enabled with the `--unsafe-fixes` option" in out
    # Asked for, the unsafe fix is applied.
    code, out = lint(project, "--fix", "--unsafe-fixes", "a.py")
    assert target.read_text().startswith("import pytrio as trio\n"), out


def test_safe_fixes_that_keep_their_comments_still_apply(project):
    source = (
        "import pytrio as trio\n"
        "# the optimiser\n"
        "adam = trio.AdamParams(\n"
        "    lr=1e-4,  # step size\n"
        ")  # end\n"
    )
    (project / "a.py").write_text(source)
    _, out = lint(project, "--fix", "a.py")
    fixed = (project / "a.py").read_text()
    assert "learning_rate=1e-4,  # step size" in fixed, out
    assert comments(fixed) == comments(source)


def _commented(code: str) -> str | None:
    """`code` with a comment after every line that can take one (not inside a string), or None
    when there is none to add."""
    import io
    import tokenize

    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    ends = {t.start[0] for t in tokens if t.type in (tokenize.NEWLINE, tokenize.NL)}
    inside = set()
    for t in tokens:
        if t.type == tokenize.STRING and t.start[0] != t.end[0]:
            inside.update(range(t.start[0], t.end[0]))
    lines = code.split("\n")
    out = []
    for number, line in enumerate(lines, start=1):
        takes = number in ends and number not in inside and line.strip() and "#" not in line
        out.append(f"{line}  # note {number}" if takes else line)
    result = "\n".join(out)
    return result if result != code else None


EXAMPLES = [
    (rule.code, example)
    for rule in all_rules()
    for example in rule.INVALID
    if (example.path or "x.py").endswith(".py")
]


@pytest.mark.parametrize(
    ("code", "example"), EXAMPLES, ids=[f"{c}-{n}" for n, (c, _) in enumerate(EXAMPLES)]
)
def test_every_rules_safe_fixes_keep_the_comments_of_its_examples(code, example):
    # Each rule's documented mistakes, with a comment at the end of every line: what --fix
    # (safe) leaves must hold every comment, whatever the rule's fix rewrites or removes.
    source = _commented(textwrap.dedent(example.code))
    if source is None:
        pytest.skip("no line can take a comment")
    result = fix_source(source, path=example.path or "x.py")
    assert not (comments(source) - comments(result.source)), (code, source, result.source)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    where=st.lists(st.integers(0, 5), min_size=1, max_size=4, unique=True),
    text=st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=1, max_size=8),
)
def test_comments_anywhere_in_a_fixed_import_survive_a_safe_fix(where, text):
    # The `from pytrio import ...` shape with comments on generated lines, above and inside.
    lines = [
        "from pytrio import (",
        "    SamplingParams,",
        "    AdamParams,",
        ")",
        "params = SamplingParams(max_tokens=4)",
        "adam = AdamParams(learning_rate=1e-4)",
    ]
    for index in sorted(where, reverse=True):
        if index == 0:
            lines.insert(0, f"# {text}")
        else:
            lines[index - 1] += f"  # {text}{index}"
    source = "\n".join(lines) + "\n"
    result = fix_source(source, path="x.py")
    assert not (comments(source) - comments(result.source)), result.source
    if result.source == source:
        ptr001 = [d for d in result.remaining if d.code == "PTR001"]
        assert ptr001 and "unsafe: it would delete the comment" in ptr001[0].fix.message


# --- compare and swap ------------------------------------------------------------------------


def test_an_edit_made_while_fix_runs_is_kept_and_reported(project, monkeypatch):
    # A tree large enough for the process pool; one file gets a line appended after its fixes
    # were computed from the old bytes and before they are written.
    tree = project / "tree"
    tree.mkdir()
    for number in range(30):
        (tree / f"m{number:02}.py").write_text(BAD)
    edited = tree / "m07.py"
    real_lint_all = runner._lint_all

    def lint_then_edit(jobs, request):
        results = real_lint_all(jobs, request)
        with edited.open("a") as handle:
            handle.write("print('added while trio-lint ran')\n")
        return results

    monkeypatch.setattr(runner, "_lint_all", lint_then_edit)
    code, out = lint(project, "--fix", "--jobs", "2", "tree")
    assert edited.read_text() == BAD + "print('added while trio-lint ran')\n"
    assert "tree/m07.py:1:1: PTR901" in out and "changed while trio-lint was fixing it" in out
    assert code == 1
    for number in range(30):
        if number != 7:
            assert (tree / f"m{number:02}.py").read_text() == FIXED
    assert temp_files(project) == []


def test_a_change_right_before_the_rename_is_not_overwritten(project, monkeypatch):
    # The compare happens after the temp file is written: an edit made during that write wins.
    target = project / "a.py"
    target.write_text(BAD)
    real_fsync = os.fsync

    def fsync_then_edit(fd):
        real_fsync(fd)
        target.write_text(BAD + "x = 1\n")

    monkeypatch.setattr(os, "fsync", fsync_then_edit)
    code, out = lint(project, "--fix", "a.py")
    assert target.read_text() == BAD + "x = 1\n"
    assert "changed while trio-lint was fixing it" in out and code == 1
    assert temp_files(project) == []


# --- symlinks --------------------------------------------------------------------------------


def test_fix_writes_a_symlinks_target_and_keeps_the_link(project):
    tree = project / "tree"
    outside = project / "outside"
    tree.mkdir()
    outside.mkdir()
    (tree / "real.py").write_text(BAD)
    (tree / "link.py").symlink_to("real.py")  # both in the tree: linted and fixed once
    (outside / "target.py").write_text(BAD)
    (tree / "ext.py").symlink_to(outside / "target.py")
    code, out = lint(project, "--fix", "--show-fixes", "tree")
    assert code == 1, out  # BAD keeps one finding without a fix
    assert (tree / "link.py").is_symlink() and (tree / "link.py").readlink() == Path("real.py")
    assert (tree / "ext.py").is_symlink()
    assert (tree / "real.py").read_text() == FIXED
    assert (outside / "target.py").read_text() == FIXED
    assert "tree/link.py" not in out  # the link's target is linted under its own name
    assert temp_files(project) == []
    # Named on the command line, the link is followed as well.
    (outside / "target.py").write_text(BAD)
    code, out = lint(project, "--fix", "tree/ext.py")
    assert (tree / "ext.py").is_symlink() and (outside / "target.py").read_text() == FIXED


# --- temporary files -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("patched", "fault"),
    [
        ("replace", OSError(28, "No space left on device")),
        ("fsync", OSError(5, "Input/output error")),
        ("fchmod", PermissionError(1, "Operation not permitted")),
        ("replace", KeyboardInterrupt()),
    ],
    ids=["replace-enospc", "fsync-eio", "fchmod-eperm", "replace-interrupt"],
)
def test_a_failed_write_leaves_the_file_and_no_temp_file(project, monkeypatch, patched, fault):
    target = project / "a.py"
    target.write_text(BAD)

    def fail(*args, **kwargs):
        raise fault

    monkeypatch.setattr(os, patched, fail)
    code, out = lint(project, "--fix", "a.py")
    assert target.read_text() == BAD
    assert temp_files(project) == []
    if isinstance(fault, OSError):
        assert code == 1 and "PTR901" in out and "cannot write the fixes" in out
        assert fault.strerror in out
    else:
        assert code == 2


KILLED_RUN = """\
import os, signal, sys
import os as _os; fileio = type("F", (), {"os": _os})
from trio_lint.cli import main
def die(*args):
    os.kill(os.getpid(), getattr(signal, sys.argv[1]))
fileio.os.replace = die
sys.exit(main(["--no-cache", "--fix", "a.py"]))
"""


def test_a_sigterm_during_the_write_removes_the_temp_file(project):
    target = project / "a.py"
    target.write_text(BAD)
    process = subprocess.run(
        [sys.executable, "-c", KILLED_RUN, "SIGTERM"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    # The run's own SIGTERM handler ended it (SystemExit(128 + 15)), not a failure to start.
    assert process.returncode == 128 + signal.SIGTERM, process.stderr
    assert target.read_text() == BAD
    assert temp_files(project) == []


def test_the_temp_file_of_a_killed_run_is_removed_by_the_next_fix(project):
    tree = project / "tree"
    tree.mkdir()
    (tree / "a.py").write_text(BAD)
    process = subprocess.run(
        [sys.executable, "-c", KILLED_RUN.replace('"a.py"', '"tree"'), "SIGKILL"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert process.returncode == -signal.SIGKILL
    left = temp_files(tree)
    assert len(left) == 1 and re.fullmatch(r"\.a\.py\.trio-lint-\d+-\w+\.tmp", left[0]), left
    # A read-only run leaves it alone; the next run that writes removes it (its pid is dead).
    lint(project, "tree")
    assert temp_files(tree) == left
    code, out = lint(project, "--fix", "tree")
    assert code == 1, out
    assert temp_files(tree) == []
    assert (tree / "a.py").read_text() == FIXED


def test_a_live_runs_temp_file_is_not_removed(project):
    # Another trio-lint writing in the same tree right now: its temp file is not stale.
    (project / "a.py").write_text(BAD)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = project / f".b.py.trio-lint-{sleeper.pid}-abc.tmp"
        live.write_text("partial")
        _, out = lint(project, "--fix", ".")
        assert live.exists(), out
        assert (project / "a.py").read_text() == FIXED
    finally:
        sleeper.kill()
        sleeper.wait()
    # Once its writer is gone, it is stale.
    (project / "a.py").write_text(BAD)
    lint(project, "--fix", "a.py")
    assert not live.exists()


def test_fix_keeps_every_other_byte_and_the_mode(project):
    target = project / "a.py"
    target.write_bytes(BAD.replace("\n", "\r\n").encode())
    target.chmod(0o750)
    lint(project, "--fix", "a.py")
    assert target.read_bytes() == FIXED.replace("\n", "\r\n").encode()
    assert target.stat().st_mode & 0o7777 == 0o750
    assert Counter(p.name for p in project.iterdir()) == Counter(["a.py", "pyproject.toml"])


def test_a_file_whose_linting_raises_is_one_internal_error_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An engine bug on one file is a PTR903 that says so (not a read error), as the language
    server reports it; the other files are still linted."""
    import trio_lint.lint.linter as linter

    real = linter.lint_document

    def crash_on_a(path: str, *args, **kwargs):
        if path.endswith("a.py"):
            raise RuntimeError("boom")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(linter, "lint_document", crash_on_a)
    (tmp_path / "a.py").write_text(BAD)
    (tmp_path / "b.py").write_text(BAD)
    run = run_main(".", "--no-cache", "--output-format", "concise", cwd=tmp_path)
    lines = run.out.splitlines()
    assert "a.py:1:1: PTR903 internal error: RuntimeError: boom (please report)" in lines, run.out
    assert any(line.startswith("b.py:") and "PTR903" not in line for line in lines), run.out
