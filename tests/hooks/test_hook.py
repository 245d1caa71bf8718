"""The PostToolUse hook (hooks/lint_edit.py) run as Claude Code runs it: a subprocess fed the
hook's JSON on stdin, with CLAUDE_PLUGIN_ROOT and CLAUDE_PROJECT_DIR set.

The events under hook_events/ are recorded PostToolUse payloads; `{project}` stands for the
project directory of each test.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EVENTS = Path(__file__).parent / "hook_events"
HOOK = ROOT / "hooks" / "lint_edit.py"
VENV_BIN = Path(sys.executable).parent

CLEAN = (ROOT / "examples" / "01_train_sft.py").read_text()


def event(name: str, project: Path) -> str:
    return (EVENTS / name).read_text().replace("{project}", str(project))


def run_hook(payload: str, project: Path, plugin_root: Path = ROOT, path: str | None = None):
    env = {
        "PATH": path if path is not None else f"{VENV_BIN}{os.pathsep}/usr/bin:/bin",
        "CLAUDE_PLUGIN_ROOT": str(plugin_root),
        "CLAUDE_PROJECT_DIR": str(project),
        "HOME": str(project),
    }
    return subprocess.run(
        [sys.executable, str(plugin_root / "hooks" / "lint_edit.py")],
        input=payload,
        env=env,
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_hook_reports_findings_of_a_buggy_edit(tmp_path):
    source = (
        "import pytrio as trio\n\n"
        "service_client = trio.ServiceClient()\n"
        "training_client = service_client.create_lora_training_client(\n"
        '    base_model="Qwen/Qwen3-4B-Instruct-2507", rank=8\n'
        ")\n"
        "batch = []\n"
        'fb = training_client.forward_backward(batch, "cross_entropy")\n'
        'print(fb.metrics["loss:sum"])\n'
        "params = trio.AdamParams(lr=1e-4)\n"
    )
    (tmp_path / "train.py").write_text(source)
    process = run_hook(event("edit_buggy.json", tmp_path), tmp_path)
    assert process.returncode == 0, process.stderr
    output = json.loads(process.stdout)
    assert output["decision"] == "block"
    reason = output["reason"]
    assert reason.startswith("trio-lint: ")
    assert "train.py:9:" in reason and "PTR101" in reason and ".result()" in reason
    assert "train.py:10:" in reason and "PTR202" in reason and "learning_rate" in reason
    assert "fix: " in reason


def test_hook_is_silent_on_a_clean_edit(tmp_path):
    (tmp_path / "train.py").write_text(CLEAN)
    process = run_hook(event("write_clean.json", tmp_path), tmp_path)
    assert process.returncode == 0, process.stderr
    assert process.stdout == ""


def test_hook_is_silent_when_the_file_does_not_use_pytrio(tmp_path):
    # A mistake PTR101 would flag in PyTRIO code, in a file that never imports the SDK.
    (tmp_path / "train.py").write_text("fb = client.forward_backward(b)\nprint(fb.metrics)\n")
    process = run_hook(event("write_clean.json", tmp_path), tmp_path)
    assert process.returncode == 0 and process.stdout == "", process.stdout


def test_hook_lints_a_module_named_in_the_projects_sdk_modules(tmp_path):
    # The quick text check must not skip code written against a module the project configured.
    (tmp_path / "train.py").write_text(
        "import acme_sdk as trio\n\n"
        "sc = trio.ServiceClient()\n"
        'tc = sc.create_lora_training_client(base_model="Qwen/Qwen3-4B-Instruct-2507", rank=8)\n'
        'fb = tc.forward_backward([], "cross_entropy")\n'
        'print(fb.metrics["loss:sum"])\n'
    )
    process = run_hook(event("write_clean.json", tmp_path), tmp_path)
    assert process.returncode == 0 and process.stdout == "", process.stdout
    (tmp_path / "pyproject.toml").write_text('[tool.trio-lint]\nsdk-modules = ["acme_sdk"]\n')
    process = run_hook(event("write_clean.json", tmp_path), tmp_path)
    assert process.returncode == 0, process.stderr
    output = json.loads(process.stdout)
    assert output["decision"] == "block" and "train.py:6:" in output["reason"], output
    assert "PTR101" in output["reason"]


def test_hook_with_a_broken_pyproject_lets_trio_lint_report_it(tmp_path):
    (tmp_path / "train.py").write_text("x = 1\n")
    (tmp_path / "pyproject.toml").write_text("[tool.trio-lint\nsdk-modules = [\n")
    process = run_hook(event("write_clean.json", tmp_path), tmp_path)
    assert process.returncode == 0, process.stderr
    output = json.loads(process.stdout)
    assert "trio-lint failed on train.py" in output["systemMessage"], output
    assert "not valid TOML" in output["systemMessage"], output


def test_hook_ignores_files_that_are_not_python(tmp_path):
    payload = event("write_clean.json", tmp_path).replace("train.py", "notes.md")
    (tmp_path / "notes.md").write_text("import pytrio\nfb = tc.forward_backward(b)\n")
    process = run_hook(payload, tmp_path)
    assert process.returncode == 0 and process.stdout == ""


def test_hook_lints_notebook_cells(tmp_path):
    cell = {
        "cell_type": "code",
        "id": "cell-1",
        "metadata": {},
        "execution_count": None,
        "outputs": [],
        "source": [
            "import pytrio as trio\n",
            "params = trio.SamplingParams(max_new_tokens=16)\n",
        ],
    }
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "train.ipynb").write_text(json.dumps(notebook))
    process = run_hook(event("notebook_edit.json", tmp_path), tmp_path)
    assert process.returncode == 0, process.stderr
    reason = json.loads(process.stdout)["reason"]
    assert "PTR201" in reason and "max_tokens" in reason and "(cell 1)" in reason


def test_hook_without_trio_lint_says_so_in_one_line_and_never_fails_the_edit(tmp_path):
    plugin = tmp_path / "plugin"
    for part in ("hooks", "scripts"):
        shutil.copytree(ROOT / part, plugin / part)
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(CLEAN)
    process = run_hook(event("write_clean.json", project), project, plugin, path="/usr/bin:/bin")
    assert process.returncode == 0, process.stderr
    lines = process.stdout.splitlines()
    assert len(lines) == 1
    message = json.loads(lines[0])
    assert "decision" not in message
    assert message["systemMessage"].startswith("pytrio plugin: trio-lint not found")
    assert "pip install pytrio-skill" in message["systemMessage"]


@pytest.mark.parametrize("payload", ["", "not json", "[]", '{"tool_input": {"file_path": 3}}'])
def test_hook_ignores_malformed_input(tmp_path, payload):
    process = run_hook(payload, tmp_path)
    assert process.returncode == 0 and process.stdout == ""
