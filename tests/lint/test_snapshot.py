"""The run snapshot: an unchanged tree is answered from it, and any change that could alter the
answer (a file edited, added, removed or replaced; an ignore file or a git root appearing) is
seen. Each run is the real CLI in a subprocess; a small driver shrinks the racy-timestamp window
(the test tree is milliseconds old) and reports whether the run had to lint."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from lint_helpers import BAD, CLEAN, run_cli

CONCISE = ("--output-format", "concise")

DRIVER = """
import sys
import trio_lint.cache, trio_lint.snapshot
trio_lint.cache.RACY_NS = trio_lint.snapshot.RACY_NS = int(sys.argv[1])
import trio_lint.cli as cli
calls = []
real = cli._lint
def spy(*args, **kwargs):
    calls.append(1)
    return real(*args, **kwargs)
cli._lint = spy
code = cli.main(sys.argv[2:])
sys.stderr.write(f"[linted: {len(calls)}]")
sys.exit(code)
"""


def drive(*args: str, cwd: Path, racy_ns: int = 0) -> tuple[int, str, bool]:
    """(exit code, stdout, whether the tree was linted rather than answered by the snapshot)."""
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, str(racy_ns), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.stderr.endswith(("[linted: 0]", "[linted: 1]")), proc.stderr
    return proc.returncode, proc.stdout, proc.stderr.endswith("[linted: 1]")


def snapshots(project: Path) -> list[Path]:
    return sorted((project / ".trio_lint_cache").glob("run-*.cache"))


def expected(project: Path, *args: str) -> tuple[int, str]:
    got = run_cli(*args, "--no-cache", cwd=project)
    return got.code, got.out


@pytest.fixture
def tree(project: Path) -> Path:
    (project / ".git").mkdir()
    (project / "pkg").mkdir()
    (project / "pkg" / "a.py").write_text(BAD)
    (project / "pkg" / "b.py").write_text(CLEAN)
    (project / "pkg" / ".gitignore").write_text("")
    (project / "top.py").write_text(BAD)
    time.sleep(0.05)  # past the file system's timestamp tick
    return project


def test_an_unchanged_tree_is_answered_by_the_snapshot(tree: Path) -> None:
    code, out, linted = drive(".", *CONCISE, cwd=tree)
    assert linted and out.count("PTR202") == 2
    assert len(snapshots(tree)) == 1
    assert (code, out) == expected(tree, ".", *CONCISE)
    for _ in range(2):
        assert drive(".", *CONCISE, cwd=tree) == (code, out, False)


def _edit_in_place(tree: Path) -> None:
    target = tree / "pkg" / "a.py"
    before = target.stat()
    edited = BAD.replace("lr=1e-4", "lR=1e-4")  # same size; only ctime and content tell
    target.write_text(edited)
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))


def _replace_by_rename(tree: Path) -> None:
    target = tree / "pkg" / "a.py"
    before = target.stat()
    new = tree / "pkg" / "new.tmp"
    new.write_text(BAD.replace("lr=1e-4", "lR=1e-4"))
    os.utime(new, ns=(before.st_atime_ns, before.st_mtime_ns))
    new.replace(target)


def _gitignore_edited_in_place(tree: Path) -> None:
    (tree / "pkg" / ".gitignore").write_text("a.py\n")


def _gitignore_created(tree: Path) -> None:
    (tree / ".gitignore").write_text("top.py\n")


def _repository_created_around(tree: Path) -> None:
    (tree / ".git").mkdir()  # the project's .gitignore now applies to pkg/


def _outside_a_repository(tree: Path) -> None:
    (tree / ".git").rmdir()
    (tree / ".gitignore").write_text("a.py\n")


CHANGES: dict[str, Callable[[Path], None]] = {
    "edited in place, mtime put back": _edit_in_place,
    "replaced by a rename": _replace_by_rename,
    "added in a subdirectory": lambda t: (t / "pkg" / "c.py").write_text(BAD),
    "removed": lambda t: (t / "top.py").unlink(),
    "a subdirectory added": lambda t: (t / "sub").mkdir() or (t / "sub" / "d.py").write_text(BAD),
    "a .gitignore edited in place": _gitignore_edited_in_place,
    "a .gitignore created": _gitignore_created,
    "a repository created around": _repository_created_around,
}


@pytest.mark.parametrize("change", list(CHANGES), ids=list(CHANGES))
def test_every_change_is_seen(tree: Path, change: str) -> None:
    linted_path = "."
    if change == "a repository created around":
        # Lint pkg/ only: nothing below it changes, only its ancestor becomes a git root.
        _outside_a_repository(tree)
        linted_path = "pkg"
        time.sleep(0.05)
    first = drive(linted_path, *CONCISE, cwd=tree)
    assert first[2] and len(snapshots(tree)) == 1
    assert drive(linted_path, *CONCISE, cwd=tree)[2] is False
    CHANGES[change](tree)
    code, out, linted = drive(linted_path, *CONCISE, cwd=tree)
    assert linted
    assert (code, out) == expected(tree, linted_path, *CONCISE)
    assert out != first[1]


def test_paths_format_and_working_directory_each_have_their_snapshot(tree: Path) -> None:
    runs = [
        ((".", *CONCISE), tree),
        (("pkg", *CONCISE), tree),
        ((".", "--output-format", "json"), tree),
        ((".", *CONCISE), tree / "pkg"),
        (("..", *CONCISE), tree / "pkg"),
    ]
    for args, cwd in runs:
        assert drive(*args, cwd=cwd)[:2] == expected(cwd, *args)
    assert len(snapshots(tree)) == len(runs)
    for args, cwd in runs:
        code, out, linted = drive(*args, cwd=cwd)
        assert not linted and (code, out) == expected(cwd, *args)


def test_a_tree_inside_the_racy_window_is_not_snapshotted(tree: Path) -> None:
    code, out, linted = drive(".", *CONCISE, cwd=tree, racy_ns=3_000_000_000)
    assert linted and (code, out) == expected(tree, ".", *CONCISE)
    assert snapshots(tree) == []


def test_a_file_that_cannot_be_read_is_never_snapshotted(tree: Path) -> None:
    (tree / "pkg" / "gone.py").symlink_to(tree / "nowhere.py")
    _, out, linted = drive(".", *CONCISE, cwd=tree)
    assert linted and "PTR901" in out
    assert snapshots(tree) == []
    assert drive(".", *CONCISE, cwd=tree)[2]  # still linted: nothing to answer from


def test_fixing_and_no_cache_runs_neither_use_nor_write_snapshots(tree: Path) -> None:
    assert drive(".", "--diff", cwd=tree)[2]
    assert drive(".", *CONCISE, "--no-cache", cwd=tree)[2]
    assert snapshots(tree) == []
    drive(".", *CONCISE, cwd=tree)
    assert drive(".", "--diff", cwd=tree)[2]
    code, _, linted = drive(".", "--fix", cwd=tree)
    assert linted and code == 1  # the -100 mask has no automatic fix
    assert "learning_rate" in (tree / "pkg" / "a.py").read_text()
    assert drive(".", *CONCISE, cwd=tree)[1] == expected(tree, ".", *CONCISE)[1]


def test_a_damaged_snapshot_is_ignored(tree: Path) -> None:
    from trio_lint.cache import read_store, write_store

    want = expected(tree, ".", *CONCISE)
    drive(".", *CONCISE, cwd=tree)
    (snapshot,) = snapshots(tree)
    intact = snapshot.read_bytes()
    good = read_store(snapshot)
    damaged: list[bytes | dict] = [
        intact[: len(intact) // 2],
        b"not a store",
        {**good, "paths": "not a list"},
        {**good, "paths": [*good["paths"], 5]},
        {**good, "paths": [*good["paths"], str(tree / "missing.py")]},
        {**good, "stamps": good["stamps"][:-1]},
        {**good, "stamps": list(good["stamps"])},
        {**good, "diagnostics": [{"code": 5}]},
        {**good, "diagnostics": "no"},
        {key: value for key, value in good.items() if key != "diagnostics"},
    ]
    for content in damaged:
        if isinstance(content, bytes):
            snapshot.write_bytes(content)
        else:
            write_store(snapshot.parent, snapshot, content)
        code, out, linted = drive(".", *CONCISE, cwd=tree)
        assert linted and (code, out) == want, str(content)[:80]
    assert drive(".", *CONCISE, cwd=tree) == (*want, False)  # rewritten whole


def test_a_list_of_files_is_served_by_the_per_file_cache_not_a_snapshot(tree: Path) -> None:
    args = ("pkg/a.py", "top.py", *CONCISE)
    for _ in range(2):
        code, out, linted = drive(*args, cwd=tree)
        assert linted and (code, out) == expected(tree, *args)
    assert snapshots(tree) == []


def test_outside_a_repository_busy_ancestors_do_not_spoil_the_snapshot(tree: Path) -> None:
    """Above a tree that is in no repository, only whether a `.git` appears matters; a file
    written next to the linted directory (as in /tmp or $HOME, all the time) does not."""
    (tree / ".git").rmdir()
    first = drive("pkg", *CONCISE, cwd=tree)
    assert first[2]
    (tree / "notes.txt").write_text("written beside pkg/, not in it\n")
    assert drive("pkg", *CONCISE, cwd=tree) == (*first[:2], False)
