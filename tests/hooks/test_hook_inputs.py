"""The PostToolUse hook exits 0 and prints at most one line whatever it is fed: malformed or
hostile events (run as Claude Code runs it, a subprocess), files that would block or never end,
a file named like an option, a broken pyproject.toml, trio-lint output of a shape it does not
expect; and, fuzzed in-process with hypothesis, any value in any of the event's fields."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
HOOK = ROOT / "hooks" / "lint_edit.py"
VENV_BIN = Path(sys.executable).parent
BUGGY = "import pytrio as trio\nadam = trio.AdamParams(lr=1e-4)\n"


MEMORY_CAP = 2 * 1024**3  # address space of a hook run: a read without bound fails fast


def _cap_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run_hook(payload: bytes, project: Path, plugin_root: Path = ROOT, timeout: float = 60):
    env = {
        "PATH": f"{VENV_BIN}{os.pathsep}/usr/bin:/bin",
        "CLAUDE_PLUGIN_ROOT": str(plugin_root),
        "CLAUDE_PROJECT_DIR": str(project),
        "HOME": str(project),
    }
    return subprocess.run(
        [sys.executable, str(HOOK)],
        input=payload,
        env=env,
        cwd=project,
        capture_output=True,
        timeout=timeout,
        preexec_fn=_cap_memory,
        check=False,
    )


def assert_one_line_at_most(process) -> dict | None:
    assert process.returncode == 0, process.stderr
    assert process.stderr == b"", process.stderr.decode(errors="replace")
    lines = process.stdout.decode().splitlines()
    assert len(lines) <= 1, lines
    if not lines:
        return None
    message = json.loads(lines[0])
    assert isinstance(message, dict)
    assert set(message) in ({"systemMessage"}, {"decision", "reason"}), message
    return message


def edit_event(project: Path, file_path: object, **fields) -> bytes:
    event = {
        "cwd": str(project),
        "hook_event_name": "PostToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": file_path, "content": ""},
    }
    event.update(fields)
    return json.dumps(event).encode()


@pytest.mark.parametrize(
    "payload",
    [
        b"",
        b"{",
        b"\xff\xfe not utf-8",
        b"[" * 100_000 + b"]" * 100_000,
        b'{"a": ' * 100_000 + b"1" + b"}" * 100_000,
        b"null",
        b'"text"',
        b'{"tool_input": []}',
        b'{"tool_input": {"file_path": ["a.py"]}}',
    ],
    ids=["empty", "truncated", "not-utf8", "deep-array", "deep-object", "null", "string",
         "tool_input-list", "file_path-list"],
)  # fmt: skip
def test_malformed_events_are_silent(tmp_path, payload):
    assert assert_one_line_at_most(run_hook(payload, tmp_path)) is None


@pytest.mark.parametrize("cwd", [5, ["/"], None, "", "relative/dir", "/no/such/dir", "/\0x"])
def test_a_cwd_of_any_shape_falls_back_to_the_project(tmp_path, cwd):
    (tmp_path / "train.py").write_text(BUGGY)
    message = assert_one_line_at_most(run_hook(edit_event(tmp_path, "train.py", cwd=cwd), tmp_path))
    assert message is not None and message.get("decision") == "block", message
    assert "PTR202" in message["reason"]


def test_a_cwd_under_a_symlink_loop_falls_back_to_the_project(tmp_path):
    # Path.resolve raises RuntimeError on a loop; the project-marker check must not.
    (tmp_path / "train.py").write_text(BUGGY)
    (tmp_path / "self").symlink_to("self")
    for cwd in (str(tmp_path / "self"), str(tmp_path / "self" / "sub")):
        event = edit_event(tmp_path, str(tmp_path / "train.py"), cwd=cwd)
        message = assert_one_line_at_most(run_hook(event, tmp_path))
        assert message is not None and message.get("decision") == "block", message
        assert "PTR202" in message["reason"]


@pytest.mark.parametrize(
    "file_path", ["a\0.py", "/etc/passwd\0.py", "x" * 10_000 + ".py", "", 3, None, {"a": 1}]
)
def test_a_file_path_that_is_no_path_is_silent(tmp_path, file_path):
    assert assert_one_line_at_most(run_hook(edit_event(tmp_path, file_path), tmp_path)) is None


@pytest.mark.parametrize("name", ["fifo.py", "zero.py"])
def test_a_fifo_or_a_device_is_never_read(tmp_path, name):
    # One per run: a FIFO would block the read, /dev/zero would never end it.
    fifo = tmp_path / "fifo.py"
    os.mkfifo(fifo)
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    process = run_hook(edit_event(tmp_path, str(tmp_path / name)), tmp_path, timeout=20)
    assert assert_one_line_at_most(process) is None
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_a_file_named_like_an_option_is_linted_as_a_file(tmp_path):
    # Were it handed over as an option, trio-lint would read evil.py as its configuration.
    (tmp_path / "evil.py").write_text("import os\n")
    (tmp_path / "--config=evil.py").write_text(BUGGY)
    for cwd in (str(tmp_path), "."):  # "." joined with a relative name leaves the bare name
        event = edit_event(tmp_path, "--config=evil.py", cwd=cwd)
        message = assert_one_line_at_most(run_hook(event, tmp_path))
        assert message is not None and message.get("decision") == "block", message
        assert "--config=evil.py:2:" in message["reason"] and "PTR202" in message["reason"]


@pytest.mark.parametrize(
    "pyproject",
    ["tool = 5\n", "[tool]\ntrio-lint = 5\n", "[tool.trio-lint]\nsdk-modules = 5\n",
     "x = " + "[" * 100_000 + "]" * 100_000 + "\n"],
    ids=["tool-int", "table-int", "modules-int", "deep"],
)  # fmt: skip
def test_a_broken_pyproject_is_trio_lints_one_line_to_report(tmp_path, pyproject):
    (tmp_path / "pyproject.toml").write_text(pyproject)
    (tmp_path / "train.py").write_text(BUGGY)
    message = assert_one_line_at_most(run_hook(edit_event(tmp_path, "train.py"), tmp_path))
    assert message is not None and "systemMessage" in message, message
    assert message["systemMessage"].startswith("pytrio plugin: trio-lint failed on train.py")
    assert "pyproject.toml" in message["systemMessage"]


@pytest.mark.parametrize(
    "output",
    ["[1, 2]", '{"a": 1}', '[{"location": 5, "fix": [], "cell": "x", "code": null}]', "not json",
     "[" * 100_000 + "]" * 100_000, '[{"location": {"row": [1]}, "fix": {"message": 5}}]'],
    ids=["ints", "object", "wrong-fields", "text", "deep", "nested-fields"],
)  # fmt: skip
def test_trio_lint_output_of_an_unexpected_shape_is_one_line(tmp_path, output):
    # A plugin whose launcher prints `output` as trio-lint's JSON (a broken or foreign build).
    plugin = tmp_path / "plugin"
    (plugin / "scripts").mkdir(parents=True)
    (plugin / "hooks").mkdir()
    (plugin / "hooks" / "lint_edit.py").write_bytes(HOOK.read_bytes())
    (tmp_path / "out.json").write_text(output)
    launcher = plugin / "scripts" / "pytrio-tool"
    launcher.write_text(f"#!/bin/sh\ncat {tmp_path / 'out.json'}\n")
    launcher.chmod(0o755)
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(BUGGY)
    message = assert_one_line_at_most(run_hook(edit_event(project, "train.py"), project, plugin))
    assert message is not None, output
    if "systemMessage" in message:
        assert message["systemMessage"].startswith("pytrio plugin: "), message
    else:
        assert message["reason"].startswith("trio-lint: "), message


# --- fuzzed in-process -----------------------------------------------------------------------


def _load_hook():
    spec = importlib.util.spec_from_file_location("lint_edit_under_test", HOOK)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


hook = _load_hook()

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
PATHS = st.sampled_from(["train.py", "nb.ipynb", "fifo.py", "zero.py", "missing.py", "dir.py",
                         "--config=x.py", "../train.py", "/dev/null.py", "a\0.py"])  # fmt: skip
EVENTS = st.fixed_dictionaries(
    {},
    optional={
        "cwd": JSON | st.just("{project}"),
        "tool_name": JSON,
        "tool_input": JSON
        | st.fixed_dictionaries(
            {}, optional={"file_path": PATHS | JSON, "notebook_path": PATHS | JSON}
        ),
    },
)


@pytest.fixture(scope="module")
def fuzz_project(tmp_path_factory):
    project = tmp_path_factory.mktemp("hook-fuzz")
    (project / "train.py").write_text(BUGGY)
    (project / "nb.ipynb").write_text("not a notebook, mentions pytrio")
    os.mkfifo(project / "fifo.py")
    (project / "zero.py").symlink_to("/dev/zero")
    (project / "dir.py").mkdir()
    (project / "pyproject.toml").write_text("tool = 5\n")
    return project


class _Stdin:
    """sys.stdin as the hook may read it: bytes from `.buffer`, or text from `read()`."""

    def __init__(self, data: bytes) -> None:
        self.buffer = io.BytesIO(data)

    def read(self, size: int = -1) -> str:
        return self.buffer.read(size).decode("utf-8", "surrogateescape")


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(event=EVENTS | JSON)
def test_any_event_field_gives_exit_0_and_one_line_at_most(
    fuzz_project, monkeypatch, capsys, event
):
    # The launcher is absent here (CLAUDE_PLUGIN_ROOT names an empty directory), so an event
    # that gets as far as running trio-lint ends in the one "did not run" line, quickly.
    text = json.dumps(event).replace("{project}", str(fuzz_project))
    monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", str(fuzz_project / "no-plugin"))
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(fuzz_project))
    monkeypatch.chdir(fuzz_project)
    monkeypatch.setattr(sys, "stdin", _Stdin(text.encode()))
    assert hook.main() == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert len(lines) <= 1, out
    if lines:
        message = json.loads(lines[0])
        assert set(message) == {"systemMessage"}, message
        assert message["systemMessage"].startswith("pytrio plugin: trio-lint did not run"), message
