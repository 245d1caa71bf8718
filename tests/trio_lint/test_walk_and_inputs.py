"""The walk and the inputs: a tree holding symlink cycles, dangling links, FIFOs, devices,
oversized or unreadable entries is linted to the end, each such entry skipped (in a directory)
or reported as PTR901 (named on the command line); malformed notebooks are PTR901 naming what is
wrong, never PTR903; malformed configuration is one exit-2 line naming the file and key, never a
traceback. What can hang (a FIFO, /dev/zero) runs as a real process under a timeout."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.lint import BAD, TRIO_LINT, run_main
from trio_lint import lint_source

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


def lint(project: Path, *args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    """trio-lint in this process, run from `project`: (exit code, stdout, stderr)."""
    run = run_main("--no-cache", "--output-format", "concise", *args, cwd=project, stdin=stdin)
    return run.code, run.out, run.err


MEMORY_CAP = 2 * 1024**3  # address space of a console run: an unbounded read fails fast


def _cap_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def console(project: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """The console script; a hang fails the test (TimeoutExpired) instead of stalling it, and a
    read without bound (of /dev/zero) ends at MEMORY_CAP instead of the shared machine's RAM."""
    return subprocess.run(
        [TRIO_LINT, "--no-cache", "--output-format", "concise", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=_cap_memory,
        check=False,
    )


def found(out: str) -> list[tuple[str, str]]:
    """(path, code) of each concise output line."""
    rows = []
    for line in out.splitlines():
        parts = line.split(":", 3)
        if len(parts) == 4 and parts[3].strip().startswith("PTR"):
            rows.append((parts[0], parts[3].split()[0]))
    return rows


# --- symlinks --------------------------------------------------------------------------------


def test_symlink_cycles_and_dangling_links_in_a_tree_are_skipped(project):
    (project / "ok.py").write_text(BAD)
    sub = project / "sub"
    sub.mkdir()
    (sub / "up").symlink_to("..")  # a directory cycle
    (project / "self").symlink_to("self")  # a self-symlink
    (project / "a").symlink_to("b")  # a two-link cycle
    (project / "b").symlink_to("a")
    (project / "loop.py").symlink_to("loop.py")
    (project / "gone.py").symlink_to("nowhere.py")
    (sub / "ptr.py").symlink_to("../loop.py")
    code, out, err = lint(project, ".")
    assert code == 1, err
    assert {path for path, _ in found(out)} == {"ok.py"}, out
    assert "Traceback" not in err and "internal error" not in err


@pytest.mark.parametrize("name", ["self", "loop.py", "gone.py", "a"])
def test_a_looping_or_dangling_link_named_on_the_command_line_is_ptr901(project, name):
    (project / "self").symlink_to("self")
    (project / "loop.py").symlink_to("loop.py")
    (project / "gone.py").symlink_to("nowhere.py")
    (project / "a").symlink_to("b")
    (project / "b").symlink_to("a")
    (project / "ok.py").write_text(BAD)
    code, out, err = lint(project, name, "ok.py")
    assert code == 1, err
    assert (name, "PTR901") in found(out), out
    assert ("ok.py", "PTR202") in found(out)  # the other file is linted as usual


FORMATS = ["full", "concise", "json", "github", "sarif"]


@pytest.mark.parametrize("output_format", FORMATS)
def test_symlink_loops_are_no_internal_error_in_any_output_format(project, output_format):
    # Loops in a walked tree, a looping link named on the command line and a standard-input
    # name under a loop: every reporter prints them (the JSON one makes paths absolute).
    (project / "ok.py").write_text(BAD)
    sub = project / "sub"
    sub.mkdir()
    (sub / "up").symlink_to("..")
    (project / "self").symlink_to("self")
    (project / "loop.py").symlink_to("loop.py")
    (sub / "ptr.py").symlink_to("../loop.py")
    stdin = b"import pytrio as trio\nx = trio.AdamParams(lr=1)\n"
    for args, data in ((["."], None), (["self", "ok.py"], None),
                       (["--stdin-filename", "self/x.py", "-"], stdin)):  # fmt: skip
        run = run_main("--no-cache", "--output-format", output_format, *args, cwd=project,
                       stdin=data)  # fmt: skip
        assert run.code == 1, (args, run.out, run.err)
        assert "internal error" not in run.err and "Traceback" not in run.err, run.err
        if output_format != "sarif":  # its rule catalogue describes PTR903 too
            assert "PTR903" not in run.out, run.out
        if output_format == "json":
            names = {Path(r["filename"]).name for r in json.loads(run.out)}
            assert names <= {"ok.py", "self", "x.py"} and names, names


def test_a_symlink_loop_in_a_stdin_filename_with_per_file_ignores(project):
    (project / "pyproject.toml").write_text('[tool.trio-lint.per-file-ignores]\n"x/*" = ["PTR3"]\n')
    (project / "self").symlink_to("self")
    stdin = b"import pytrio as trio\nx = trio.AdamParams(lr=1)\n"
    _, out, err = lint(project, "--stdin-filename", "self/x.py", "-", stdin=stdin)
    assert found(out) == [("self/x.py", "PTR202")], out + err


def test_a_config_that_is_a_symlink_loop_a_directory_or_a_fifo_is_one_line(project):
    (project / "self.toml").symlink_to("self.toml")
    (project / "dir.toml").mkdir()
    os.mkfifo(project / "fifo.toml")
    for name in ("self.toml", "dir.toml", "fifo.toml"):
        if name == "fifo.toml":  # opened, a FIFO blocks: a real process, under a timeout
            ran = console(project, "--config", name, ".")
            code, out, err = ran.returncode, ran.stdout, ran.stderr
        else:
            code, out, err = lint(project, "--config", name, ".")
        assert code == 2, (name, out, err)
        assert err.count("\n") == 1 and name in err and "Traceback" not in err, err
        assert "skipped" not in err, err  # the run stops: nothing was skipped


# --- only regular files, bounded ---------------------------------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_fifos_and_devices_in_a_tree_are_skipped_and_named_ones_reported(project, kind):
    # One special file per run, so that each is shown to neither hang (a FIFO) nor be read
    # without bound (/dev/zero) on its own, in a walked tree and named on the command line.
    (project / "ok.py").write_text(BAD)
    name = f"{kind}.py"
    if kind == "fifo":
        os.mkfifo(project / name)
    else:
        (project / name).symlink_to("/dev/zero")
    (project / "null.py").symlink_to("/dev/null")
    walked = console(project, ".", timeout=30)
    assert walked.returncode == 1, walked.stderr
    assert {path for path, _ in found(walked.stdout)} == {"ok.py"}, walked.stdout
    named = console(project, name, "null.py", "ok.py", timeout=30)
    assert named.returncode == 1, named.stderr
    rows = found(named.stdout)
    assert (name, "PTR901") in rows and ("null.py", "PTR901") in rows, named.stdout
    what = "a FIFO" if kind == "fifo" else "a device"
    assert f"{name}:1:1: PTR901 not a regular file ({what})" in named.stdout, named.stdout
    assert ("ok.py", "PTR202") in rows


def test_the_size_cap_is_checked_before_reading(project, monkeypatch):
    big = project / "big.py"
    with big.open("wb") as handle:  # sparse: 11 MiB that cost nothing to make
        handle.write(b"import pytrio\n")
        handle.truncate(11 * 1024 * 1024)
    real_read, real_open = os.read, os.open
    opened: list[str] = []

    def tracking_open(path, *args, **kwargs):
        opened.append(os.fspath(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", tracking_open)
    monkeypatch.setattr(os, "read", real_read)
    code, out, _ = lint(project, "big.py", ".")
    assert code == 1
    assert found(out) == [("big.py", "PTR901")], out
    assert "larger than 10 MiB" in out
    assert not any(p.endswith("big.py") for p in opened)  # refused from stat, never opened


def test_an_unreadable_directory_is_reported(project, monkeypatch):
    # The tests run as root (permissions do not stop it), so the listing fails by injection.
    (project / "ok.py").write_text(BAD)
    locked = project / "locked"
    locked.mkdir()
    (locked / "hidden.py").write_text(BAD)
    real_scandir = os.scandir

    def scandir(path="."):
        if os.fspath(path).rstrip(os.sep).endswith("locked"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    code, out, err = lint(project, ".")
    assert code == 1, err
    assert ("locked", "PTR901") in found(out), out
    assert "cannot read the directory: Permission denied" in out


# --- notebooks -------------------------------------------------------------------------------


def _notebook(**overrides) -> str:
    cell = {"cell_type": "code", "metadata": {}, "source": ["import pytrio as trio\n"]}
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    notebook.update(overrides)
    return json.dumps(notebook)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (_notebook(cells=[{"cell_type": "code", "source": [1, 2]}]), "cell 1's `source`"),
        (_notebook(cells=[{"cell_type": "code", "source": 5}]), "cell 1's `source`"),
        (_notebook(cells=[{"cell_type": "code", "source": {"a": 1}}]), "cell 1's `source`"),
        (_notebook(metadata=5), "`metadata` must be an object"),
        (_notebook(metadata=["x"]), "`metadata` must be an object"),
        (_notebook(metadata={"language_info": 5}), "`metadata.language_info`"),
        (_notebook(metadata={"language_info": {"name": 3}}), "`metadata.language_info.name`"),
        ('{"cells": [], "x": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
        ("[" * 100_000, "not a valid notebook"),
    ],
    ids=[
        "ints",
        "number",
        "object",
        "metadata",
        "metadata-list",
        "language_info",
        "name",
        "deep",
        "deep-broken",
    ],
)
def test_malformed_notebooks_are_ptr901_with_the_reason(text, reason):
    diagnostics = lint_source(text + "\n", "nb.ipynb", {"force-sdk": True})
    assert [d.code for d in diagnostics] == ["PTR901"], diagnostics
    assert reason in diagnostics[0].message


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
CELL = st.fixed_dictionaries(
    {"cell_type": st.sampled_from(["code", "markdown", 3, None])},
    optional={
        "source": JSON | st.lists(st.text(max_size=20) | JSON, max_size=3),
        "metadata": JSON,
        "outputs": JSON,
    },
)
NOTEBOOK = st.fixed_dictionaries(
    {},
    optional={
        "cells": st.lists(CELL | JSON, max_size=4) | JSON,
        "metadata": JSON
        | st.fixed_dictionaries(
            {}, optional={"language_info": JSON | st.fixed_dictionaries({"name": JSON})}
        ),
        "nbformat": JSON,
    },
)


@SETTINGS
@given(notebook=NOTEBOOK | JSON)
def test_no_notebook_shape_is_an_internal_error(notebook):
    text = json.dumps(notebook)
    diagnostics = lint_source(text, "nb.ipynb", {"force-sdk": True})
    assert "PTR903" not in {d.code for d in diagnostics}, (text, diagnostics)
    for diagnostic in diagnostics:
        if diagnostic.code == "PTR901":
            assert diagnostic.message.startswith("not a valid notebook"), diagnostic.message


# --- configuration ---------------------------------------------------------------------------


DEEP = "[" * 100_000 + "]" * 100_000  # deeper than any recursion limit a test may have set


@pytest.mark.parametrize(
    ("toml", "names"),
    [
        ("tool = 5\n", ["`tool` must be a table"]),
        ('tool = "trio-lint"\n', ["`tool` must be a table"]),
        ("[tool]\ntrio-lint = 5\n", ["[tool.trio-lint] must be a table"]),
        ("[other]\nx = " + DEEP + "\n", ["nested too deeply"]),
        ("[tool.trio-lint]\nselect = " + DEEP + "\n", ["nested too deeply"]),
        ("[tool.trio-lint]\nselect = [[[[[[[[1]]]]]]]]\n", ["`select`", "expected a list"]),
        ('[tool.trio-lint]\nper-file-ignores = {"a" = [[[[[1]]]]]}\n', ["`per-file-ignores`"]),
        ("[tool.trio-lint]\nmarkdown = {a = {b = {c = {d = 1}}}}\n", ["`markdown`"]),
        ("[tool.trio-lint]\ntarget-version = []\n", ["`target-version`"]),
    ],
    ids=[
        "tool-int",
        "tool-str",
        "table-int",
        "deep-other",
        "deep-select",
        "select",
        "pfi",
        "markdown",
        "tv",
    ],
)
def test_malformed_config_is_one_line_naming_the_file_and_key(project, toml, names):
    (project / "pyproject.toml").write_text(toml)
    (project / "a.py").write_text(BAD)
    code, out, err = lint(project, ".")
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and "Traceback" not in err and "internal error" not in err, err
    assert "pyproject.toml" in err
    for name in names:
        assert name in err, err
    assert len(err) < 400  # a bounded repr of the value, not the whole nested array


TOML_VALUE = st.recursive(
    st.booleans() | st.integers(-5, 5) | st.text("abPTR1,*/ ", max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abc"), inner, max_size=2)
    ),
    max_leaves=8,
)
KEYS = st.sampled_from(
    ["select", "ignore", "per-file-ignores", "exclude", "sdk-modules", "target-version",
     "force-sdk", "markdown", "cache-dir", "respect-gitignore", "selec"]
)  # fmt: skip


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"


@SETTINGS
@given(table=st.dictionaries(KEYS, TOML_VALUE, max_size=3), tool=st.none() | TOML_VALUE)
def test_no_config_shape_is_a_traceback(tmp_path_factory, table, tool):
    from trio_lint.settings.config import ConfigError, load_config

    directory = tmp_path_factory.mktemp("cfg")
    if tool is not None:
        text = f"tool = {_toml(tool)}\n"
    else:
        text = "[tool.trio-lint]\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in table.items())
    (directory / "pyproject.toml").write_text(text)
    try:
        load_config(None, search_from=directory)
    except ConfigError as error:
        assert "pyproject.toml" in str(error)


# --- standard input and the cache ------------------------------------------------------------


def test_standard_input_over_the_size_limit_is_refused_not_truncated(project):
    # Read without bound, `trio-lint - < /dev/zero` never ends; with --fix, printing a
    # truncated copy as "the fixed code" would lose the rest of the user's file.
    data = b"import pytrio\n" + b"#" * (10 * 1024 * 1024)
    code, out, err = lint(project, "--fix", "-", stdin=data)
    assert code == 2 and out == "", out[:200]
    assert "standard input is larger than 10 MiB" in err and err.count("\n") == 1


def test_a_killed_runs_cache_temp_file_is_removed(project):
    (project / "a.py").write_text(BAD)
    cache = project / ".trio_lint_cache"
    cache.mkdir()
    old = cache / "tmpabc123.tmp"
    old.write_bytes(b"half a store")
    os.utime(old, (1_000_000, 1_000_000))
    fresh = cache / "tmpdef456.tmp"  # another run may be writing this one right now
    fresh.write_bytes(b"being written")
    run_main("a.py", cwd=project)  # with the cache
    assert not old.exists() and fresh.exists()
