"""`claude plugin validate` (Claude Code 2.1.332, from npm, on Node 22) accepts the plugin.

npm installs node@22 and @anthropic-ai/claude-code into a cache directory (reused across runs:
$PYTRIO_SKILL_TEST_CACHE, else ~/.cache/pytrio-skill-tests); the CLI runs offline with a
temporary HOME on a copy of the repository's files (tracked and new, never .venv or caches).
Skipped, with the reason, only when npm cannot install it.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.tool_cache import npm_prefix

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("node@22", "@anthropic-ai/claude-code@2.1.332")
TIMEOUT = 900

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def claude() -> Path:
    binary = "node_modules/.bin/claude"
    return npm_prefix("claude-code-2.1.332", PACKAGES, binary) / binary


@pytest.fixture(scope="module")
def plugin_copy(tmp_path_factory) -> Path:
    listing = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    destination = tmp_path_factory.mktemp("plugin")
    for name in filter(None, listing.split("\0")):
        source = ROOT / name
        if source.is_file():
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return destination


def validate(claude: Path, target: Path, tmp_path: Path, *options: str) -> dict:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {
        "PATH": f"{claude.parent}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(home),
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
    }
    process = subprocess.run(
        [str(claude), "plugin", "validate", "--json", *options, str(target)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    report = json.loads(process.stdout)
    assert process.returncode == 0, json.dumps(report, indent=2)[-3000:]
    return report


def test_marketplace_and_plugin_pass_strict_validation(claude, plugin_copy, tmp_path):
    report = validate(claude, plugin_copy, tmp_path, "--strict")
    assert report["success"] is True
    assert report["manifest"]["type"] == "marketplace"
    assert report["manifest"]["errors"] == [] and report["manifest"]["warnings"] == []
    provides = report["provides"]
    assert provides["skills"] == ["pytrio:pytrio"]
    assert [server["name"] for server in provides["mcpServers"]] == ["trio-mcp"]
    assert [server["name"] for server in provides["lspServers"]] == ["trio-lint"]
    (hook,) = provides["hooks"]
    assert (hook["event"], hook["matcher"]) == ("PostToolUse", "Write|Edit|MultiEdit|NotebookEdit")

    manifest = validate(
        claude, plugin_copy / ".claude-plugin" / "plugin.json", tmp_path, "--strict"
    )
    assert manifest["manifest"]["type"] == "plugin"
    assert manifest["manifest"]["errors"] == [] and manifest["manifest"]["warnings"] == []


def test_plugin_directory_profile_accepts_the_plugin(claude, plugin_copy, tmp_path):
    report = validate(claude, plugin_copy, tmp_path, "--strict", "--profile", "directory")
    directory = report["directory"]
    assert directory["findings"] == [] and directory["failure"] is None
    # The README carries the one-step install line the directory asks for.
    assert report["advice"] == []


CASES = sorted(path.parent.name for path in (ROOT / "evals").glob("*/prompt.md"))


@pytest.mark.parametrize("case", CASES)
def test_claude_plugin_eval_reads_each_case_as_the_offline_graders_do(
    claude, plugin_copy, tmp_path, case
):
    """The CLI loads the case with no credentials (so no model is ever called: the run stops at
    the login check) and reports how it parsed the prompt and graders; the offline tests'
    reading of the same grader files must agree field by field."""
    from tests.evals.graders import load_graders

    home = tmp_path / "home"
    home.mkdir()
    result = tmp_path / "result.json"
    env = {"PATH": f"{claude.parent}{os.pathsep}/usr/bin:/bin", "HOME": str(home)}
    env["DISABLE_TELEMETRY"] = "1"
    env["TMPDIR"] = str(tmp_path)  # the runs' kept sandboxes stay in the test's directory
    process = subprocess.run(
        [
            str(claude),
            "plugin",
            "eval",
            str(plugin_copy),
            "--case",
            case,
            "--runs",
            "1",
            "--ablation",
            "none",
            "--trust-plugin",
            "--no-publish",
            "--max-cost-usd",
            "0.01",
            "--output-dir",
            str(tmp_path / "out"),
            "--json",
            str(result),
        ],
        env=env,
        cwd=plugin_copy,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    report = json.loads(result.read_text())
    assert report["partialReason"] == "auth_failed", process.stdout[-2000:]
    assert report["costUsd"] == 0
    (parsed,) = report["cases"]
    assert parsed["name"] == case
    assert "trio-local run --check-report check.json -- " in parsed["promptMarkdown"]
    cli = {grader["name"]: grader for grader in parsed["graders"]}
    ours = {grader.name: grader for grader in load_graders(plugin_copy / "evals" / case)}
    assert set(cli) == set(ours)
    for name, grader in ours.items():
        config = cli[name]["config"]
        assert cli[name]["type"] == grader.kind, name
        if grader.kind == "regex":
            assert config["target"] == grader.meta["target"], name
            assert config["pattern"] == grader.meta["pattern"], name
            assert config["flags"] == grader.meta.get("flags", ""), name
            assert config["match"] == grader.meta.get("match", "contains"), name
        elif grader.kind == "file_exists":
            assert config == {"path": grader.meta["path"], "exists": True}, name
        elif grader.kind == "tool_used":
            assert config == {k: v for k, v in grader.meta.items() if k != "type"}, name
        else:
            assert config["criteria"] == grader.body, name
