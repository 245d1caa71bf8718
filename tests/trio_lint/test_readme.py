"""The README's trio-lint section: its configuration example and pre-commit hook ids are real."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

from trio_lint.settings.config import config_from_mapping

ROOT = Path(__file__).resolve().parents[2]


def _section() -> str:
    text = (ROOT / "README.md").read_text()
    return text[text.index("## trio-lint") : text.index("## trio-mcp")]


def test_readme_config_example_is_valid() -> None:
    block = re.search(r"```toml\n(\[tool\.trio-lint\].*?)```", _section(), re.S)
    assert block, "the trio-lint section shows a [tool.trio-lint] example"
    table = tomllib.loads(block.group(1))["tool"]["trio-lint"]
    config = config_from_mapping(table, origin="README")
    assert config.sdk_modules == ("pytrio", "tinker")
    assert "tests/**" in config.per_file_ignores


def test_readme_hooks_exist() -> None:
    hooks = {hook["id"] for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    shown = set(re.findall(r"- id: (\S+)", _section()))
    assert shown == hooks == {"trio-lint", "trio-lint-fix"}
