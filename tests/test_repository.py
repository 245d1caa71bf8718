"""The repository contract: the README's set-up block and the CI entry point."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def first_code_block(markdown: str) -> list[str]:
    match = re.search(r"```[a-z]*\n(.*?)```", markdown, re.S)
    assert match, "README has no code block"
    return [line for line in match.group(1).splitlines() if line.strip()]


def test_readme_opens_with_exactly_the_two_commands() -> None:
    assert first_code_block((ROOT / "README.md").read_text()) == ["make demo", "make test"]


def test_ci_runs_exactly_make_test() -> None:
    lines = (ROOT / ".ci/run").read_text().splitlines()
    commands = [line for line in lines if line.strip() and not line.startswith("#")]
    assert "set -euo pipefail" in commands
    assert commands[-1] == "make test"


def test_console_scripts_and_extras_are_declared() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert set(project["scripts"]) == {"trio-lint", "trio-mcp", "trio-local"}
    extras = project["optional-dependencies"]
    assert "torch==2.13.0" in extras["local"]
    heavy = ("torch", "transformers", "peft")
    assert not any(dep.startswith(heavy) for dep in project["dependencies"])
