"""The Claude Code plugin manifest, marketplace entry and launcher agree with the project."""

import json
import os
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())
MARKETPLACE = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
LAUNCHER = ROOT / "scripts" / "pytrio-tool"


def test_version_and_license_come_from_pyproject():
    assert PLUGIN["version"] == PROJECT["version"]
    assert PLUGIN["license"] == PROJECT["license"]
    (entry,) = MARKETPLACE["plugins"]
    assert entry["name"] == PLUGIN["name"]
    assert entry["version"] == PROJECT["version"]
    assert entry["source"] == "./"


def test_skill_is_the_lean_install_copy():
    # skills/pytrio/ is what the plugin loads; the root SKILL.md (metadata.internal) is not.
    assert PLUGIN["skills"] == "./skills/"
    skills = [path.parent.name for path in (ROOT / "skills").glob("*/SKILL.md")]
    assert skills == ["pytrio"]


def test_component_paths_exist():
    assert (ROOT / PLUGIN["hooks"]).is_file()
    hooks = json.loads((ROOT / PLUGIN["hooks"]).read_text())["hooks"]["PostToolUse"]
    (group,) = hooks
    assert group["matcher"] == "Write|Edit|MultiEdit|NotebookEdit"
    (hook,) = group["hooks"]
    assert "${CLAUDE_PLUGIN_ROOT}/hooks/lint_edit.py" in hook["command"]
    assert (ROOT / "hooks" / "lint_edit.py").is_file()
    for server in (*PLUGIN["mcpServers"].values(), *PLUGIN["lspServers"].values()):
        assert server["command"] == "${CLAUDE_PLUGIN_ROOT}/scripts/pytrio-tool"
    assert os.access(LAUNCHER, os.X_OK)
    assert PLUGIN["lspServers"]["trio-lint"]["args"] == ["trio-lint", "server"]
    assert PLUGIN["mcpServers"]["trio-mcp"]["args"] == ["trio-mcp"]


def launch(tmp_path: Path, *args: str, env: dict[str, str] | None = None):
    """The launcher with a fake project .venv whose commands echo their arguments."""
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    for tool in ("trio-mcp", "trio-lint"):
        (bin_dir / tool).write_text(f'#!/bin/sh\necho {tool} "$@"\n')
        (bin_dir / tool).chmod(0o755)
    base = {"PATH": "/usr/bin:/bin", "CLAUDE_PROJECT_DIR": str(tmp_path)}
    return subprocess.run(
        [str(LAUNCHER), *args],
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        check=False,
    )


def test_launcher_picks_local_backend_unless_an_api_key_is_set(tmp_path):
    assert launch(tmp_path, "trio-mcp").stdout.split() == ["trio-mcp", "--backend", "local"]
    remote = launch(tmp_path, "trio-mcp", env={"PYTRIO_API_KEY": "k"}).stdout.split()
    assert remote == ["trio-mcp", "--backend", "remote"]
    assert launch(tmp_path, "trio-lint", "server").stdout.split() == ["trio-lint", "server"]


def test_launcher_names_what_to_install_when_nothing_is_found(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "CLAUDE_PROJECT_DIR": str(tmp_path)}
    env["CLAUDE_PLUGIN_ROOT"] = str(tmp_path)
    for args, package in [
        (["trio-mcp"], "'pytrio-skill[mcp,local]'"),
        (["trio-lint", "server"], "'pytrio-skill[lsp]'"),
        (["trio-lint", "x.py"], "pytrio-skill "),
    ]:
        process = subprocess.run(
            [str(LAUNCHER), *args], env=env, capture_output=True, text=True, check=False
        )
        assert process.returncode == 127
        lines = process.stderr.splitlines()
        assert len(lines) == 1 and f"pip install {package}" in lines[0], lines
