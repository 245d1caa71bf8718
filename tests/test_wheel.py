"""`pip install pytrio-skill` (not editable) works: a wheel built from the sdist of the committed
files, in a fresh venv.

- The base install runs trio-lint, and `trio-mcp` / `trio-local` name the extra to install
  instead of failing with a traceback.
- With the `mcp` extra, `trio-mcp --help` runs and the official MCP client reads a
  `skill://pytrio/...` resource from the wheel's own copy of the skill (a wheel has no repository
  root). The extra's dependencies (pytrio, transformers, modelscope, mcp, matplotlib: about 500
  MB) are taken from this test's own venv through a `.pth` line placed after the fresh venv's
  site-packages, instead of being downloaded again: the wheel's packages still come first.
  (A real `pip install 'pytrio-skill[mcp]'` into such a venv was checked by hand; it takes minutes.)
"""

import io
import os
import subprocess
import sys
import sysconfig
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 600

pytestmark = pytest.mark.slow


def run(*command: str | Path, **options) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(c) for c in command],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
        **options,
    )


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A fresh venv with the wheel of HEAD installed (base dependencies only)."""
    work = tmp_path_factory.mktemp("wheel")
    source, dist, venv = work / "source", work / "dist", work / "venv"
    archive = subprocess.run(
        ["git", "archive", "--format=tar", "HEAD"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(source, filter="data")
    # `python -m build`: the sdist, then the wheel from it, each in an isolated build env with
    # the build-system requirements of pyproject.toml (a fresh venv's own setuptools is too old)
    built = run(sys.executable, "-m", "build", "--outdir", dist, source)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (wheel,) = dist.glob("pytrio_skill-*.whl")
    # No pip of its own (ensurepip costs seconds): this venv's pip installs into it (--python),
    # the wheel and its base dependencies land in the fresh venv's site-packages all the same.
    created = run(sys.executable, "-m", "venv", "--without-pip", venv)
    assert created.returncode == 0, created.stderr
    installed = run(
        sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "-q", wheel
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    return venv


def test_trio_lint_runs_from_the_wheel(venv, tmp_path) -> None:
    script = tmp_path / "train.py"
    script.write_text("import pytrio as trio\nparams = trio.AdamParams(lr=1e-4)\n")
    process = run(venv / "bin" / "trio-lint", "--no-cache", script, cwd=tmp_path)
    assert process.returncode == 1, process.stderr
    assert "PTR202" in process.stdout
    # The API data of every release ships in the wheel: target-version and the version rules.
    script.write_text("import pytrio as trio\ntrio.configure(timeout=600)\n")
    process = run(venv / "bin" / "trio-lint", "--no-cache", script, cwd=tmp_path)
    assert process.returncode == 1 and "request_timeout_seconds" in process.stdout, process.stderr
    process = run(
        venv / "bin" / "trio-lint", "--no-cache", "--target-version", "0.2.8", script, cwd=tmp_path
    )
    assert process.returncode == 0, process.stdout + process.stderr


@pytest.mark.parametrize(("command", "extra"), [("trio-mcp", "mcp"), ("trio-local", "local")])
def test_a_missing_extra_is_named_not_a_traceback(venv, command, extra) -> None:
    process = run(venv / "bin" / command, "--help")
    assert process.returncode == 2
    assert f"pip install 'pytrio-skill[{extra}]'" in process.stderr
    assert "Traceback" not in process.stderr + process.stdout


def borrow_the_mcp_extra(venv: Path) -> None:
    packages = run(
        venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"
    )
    ours = sysconfig.get_path("purelib")
    (Path(packages.stdout.strip()) / "zz_test_extras.pth").write_text(ours + "\n")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_trio_mcp_serves_the_skill_from_the_wheel(venv, tmp_path) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    borrow_the_mcp_extra(venv)
    process = run(venv / "bin" / "trio-mcp", "--help")
    assert process.returncode == 0 and "usage: trio-mcp" in process.stdout, process.stderr
    where = run(
        venv / "bin" / "python", "-c",
        "import mcp_server.resources as r; print(r.skill_root()); print(r.__file__)",
        cwd=tmp_path,  # not this checkout, which `python -c` would put first on sys.path
    )  # fmt: skip
    skill_root, module = map(Path, where.stdout.split())
    assert skill_root.name == "skill" and skill_root.parent == module.parent
    assert skill_root.is_relative_to(venv)  # the wheel's copy, not this checkout
    params = StdioServerParameters(
        command=str(venv / "bin" / "trio-mcp"),
        args=["--backend", "local", "--set", "eager_backend=false"],
        cwd=str(tmp_path),
        env={**os.environ, "HOME": str(tmp_path)},
    )
    async with Client(params, read_timeout_seconds=120) as client:
        uris = {str(r.uri) for r in (await client.list_resources()).resources}
        assert {"skill://pytrio/SKILL.md", "skill://pytrio/references/rest-client.md"} <= uris
        skill = await client.read_resource("skill://pytrio/SKILL.md")
        text = skill.contents[0].text
    assert text == (ROOT / "skills" / "pytrio" / "SKILL.md").read_text(encoding="utf-8")
    assert text.startswith("---\nname: pytrio\n")
    copy = ROOT / "skills" / "pytrio"
    assert files(skill_root) == files(copy)


def files(folder: Path) -> set[str]:
    return {
        path.relative_to(folder).as_posix()
        for path in folder.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
