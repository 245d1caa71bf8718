"""`npx skills add` installs the skill from a clean export of the repository.

skills 1.5.18 is the last release that runs on Node 20. The export is `git archive HEAD`, so the
test sees exactly the committed files (never a local .venv), and runs with a temporary HOME and
npm cache and telemetry off.
"""

import io
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SKILLS_CLI = "skills@1.5.18"

pytestmark = pytest.mark.slow


def export_head(destination: Path) -> None:
    archive = subprocess.run(
        ["git", "archive", "--format=tar", "HEAD"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(destination, filter="data")


def test_npx_skills_add_installs_the_whole_skill(tmp_path: Path) -> None:
    npx = shutil.which("npx")
    if npx is None:
        pytest.skip("npx is not installed (Node.js is needed for the skills CLI)")
    export, project, home = tmp_path / "export", tmp_path / "project", tmp_path / "home"
    for folder in (export, project, home):
        folder.mkdir()
    export_head(export)
    env = {
        **os.environ,
        "HOME": str(home),
        "npm_config_cache": str(tmp_path / "npm-cache"),
        "DISABLE_TELEMETRY": "1",
        "DO_NOT_TRACK": "1",
    }
    command = [npx, "-y", SKILLS_CLI, "add", str(export), "--skill", "pytrio"]
    process = subprocess.run(
        [*command, "-a", "claude-code", "-y", "--copy"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert process.returncode == 0, f"{process.stdout}\n{process.stderr}"
    installed = project / ".claude" / "skills" / "pytrio"
    assert (installed / "SKILL.md").is_file()
    for folder in ("references", "best-practices", "examples"):
        assert (installed / folder).is_dir(), folder
        assert sorted(p.name for p in (installed / folder).iterdir()) == sorted(
            p.name for p in (export / folder).iterdir()
        )
    assert (installed / "SKILL.md").read_text() == (export / "SKILL.md").read_text()
    assert not (installed / ".venv").exists()
