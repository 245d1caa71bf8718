"""`npx skills add` installs exactly the skill's files: skills/pytrio/, never the repository.

Runs the `skills` CLI 1.7.4 (it needs Node >= 22.20) on a Node 22 that npm installs into a
prefix kept between runs, so the machine's own Node does not matter. The source is a clean export
of the committed files (`git archive HEAD`, never a local .venv), turned into its own git
repository:
- as a file:// git URL, the path a remote install (`owner/repo`) takes: the CLI clones it;
- as a local path, and as the local path of skills/pytrio/ (the subpath form).
The CLI runs with a temporary HOME and npm cache and with telemetry off. The test is skipped,
with the reason, only when npm cannot install Node 22 or the CLI (no npm, no registry access).
"""

import io
import os
import subprocess
import tarfile
from pathlib import Path

import pytest

from docgen import skill_copy
from tests.support.tool_cache import npm_prefix

ROOT = Path(__file__).resolve().parents[2]
SKILLS_CLI = "skills@1.7.4"
NODE = "node@22"
TIMEOUT = 600

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cli() -> list[str]:
    """[node22, skills/bin/cli.mjs] from an npm prefix kept between runs (support/tool_cache.py)."""
    node_path, script_path = "node_modules/.bin/node", "node_modules/skills/bin/cli.mjs"
    prefix = npm_prefix(f"skills-{SKILLS_CLI}", (NODE, SKILLS_CLI), node_path, script_path)
    node, script = prefix / node_path, prefix / script_path
    version = subprocess.run([str(node), "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.startswith("v22."), version.stdout
    return [str(node), str(script)]


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    """The committed files as a git repository of their own (a clean clone of HEAD)."""
    destination = tmp_path_factory.mktemp("export")
    archive = subprocess.run(
        ["git", "archive", "--format=tar", "HEAD"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(destination, filter="data")
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid"]
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "export"]):
        subprocess.run([*git, *command], cwd=destination, check=True, capture_output=True)
    return destination


def tree(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def install(cli: list[str], source: str, tmp_path: Path, *options: str) -> Path:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    env = {
        **os.environ,
        "HOME": str(home),
        "npm_config_cache": str(tmp_path / "npm-cache"),
        "DISABLE_TELEMETRY": "1",
        "DO_NOT_TRACK": "1",
    }
    process = subprocess.run(
        [*cli, "add", source, *options, "-a", "claude-code", "-y", "--copy"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert process.returncode == 0, f"{process.stdout[-3000:]}\n{process.stderr[-3000:]}"
    installed = project / ".claude" / "skills"
    assert sorted(p.name for p in installed.iterdir()) == ["pytrio"]
    return installed / "pytrio"


def assert_exactly_the_skill(installed: Path, export: Path) -> None:
    expected = {path.as_posix() for path in skill_copy.skill_files(export)}
    got = tree(installed)
    assert set(got) == expected, f"extra {set(got) - expected}, missing {expected - set(got)}"
    assert got == tree(export / skill_copy.COPY_DIR)
    assert len(got) < 60  # the skill, not the repository's hundreds of files


def test_install_from_a_file_url_of_a_clean_clone(cli, export, tmp_path) -> None:
    assert_exactly_the_skill(install(cli, export.as_uri(), tmp_path), export)


def test_install_from_a_local_checkout(cli, export, tmp_path) -> None:
    assert_exactly_the_skill(install(cli, str(export), tmp_path), export)


def test_install_from_the_skill_folder_by_name(cli, export, tmp_path) -> None:
    source = str(export / skill_copy.COPY_DIR)
    assert_exactly_the_skill(install(cli, source, tmp_path, "--skill", "pytrio"), export)
