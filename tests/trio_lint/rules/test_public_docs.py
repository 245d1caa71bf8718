"""What users read about the rules: no private references anywhere, public references that
resolve on the installed SDK, examples that fire, and prose that is wrapped once (by the reader)."""

from __future__ import annotations

import importlib
import itertools
import json
import re
import subprocess
import sys
import tomllib
from functools import cache
from pathlib import Path

import pytest

from tests.trio_lint.rules._private_refs import private_references
from trio_lint import lint_source
from trio_lint.rules import all_rules, get_rule

ROOT = Path(__file__).resolve().parents[3]
TRIO_LINT = str(Path(sys.executable).parent / "trio-lint")
RULES = [pytest.param(rule, id=rule.code) for rule in all_rules()]
USER_TEXTS = sorted(
    {
        *ROOT.glob("references/**/*.md"),
        *ROOT.glob("skills/**/*.md"),
        *ROOT.glob("README*.md"),
        ROOT / "SKILL.md",
    }
)
_FENCE = re.compile(r"```(\w*)\n(.*?)```", re.S)


@cache
def catalogue() -> dict[str, dict]:
    """`trio-lint rule --all --output-format json`, as a user's tools read it."""
    proc = subprocess.run(
        [TRIO_LINT, "rule", "--all", "--output-format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    return {entry["code"]: entry for entry in json.loads(proc.stdout)}


def rule_text(code: str) -> str:
    proc = subprocess.run([TRIO_LINT, "rule", code], capture_output=True, text=True, check=True)
    return proc.stdout


@pytest.mark.parametrize("path", USER_TEXTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_private_reference_in_user_facing_files(path: Path) -> None:
    assert private_references(path.read_text(encoding="utf-8")) == []


def test_no_private_reference_in_rule_output() -> None:
    found = {code: private_references(json.dumps(entry)) for code, entry in catalogue().items()}
    assert {code: refs for code, refs in found.items() if refs} == {}


def test_the_private_pattern_catches_what_it_is_for() -> None:
    for text in (
        "see api-diff.md row 51",
        "(`013:lib/sampling_client.py:55-111`)",
        "§2",
        "TRIO020",
        "coordinator.py:172-175",
        "anchors.md 3.3",
    ):
        assert private_references(text), text
    assert private_references("pytrio 0.2.9: `pytrio.configure`, see references/mcp-tools.md") == []


@pytest.mark.parametrize("rule", [r for r in RULES if not r.values[0].code.startswith("PTR9")])
def test_references_name_symbols_of_the_installed_sdk(rule) -> None:
    """A reference to the installed release names a symbol that really exists there."""
    from importlib.metadata import version

    installed = version("pytrio")
    references = rule.doc.split("## References", 1)[1]
    for line in references.splitlines():
        if not line.startswith(f"- pytrio {installed}:"):
            continue
        for name in re.findall(r"`(pytrio(?:\.\w+)+)`", line):
            obj = importlib.import_module("pytrio")
            for part in name.split(".")[1:]:
                if hasattr(obj, part):
                    obj = getattr(obj, part)
                else:
                    obj = importlib.import_module(f"{obj.__name__}.{part}")


def _blocks(markdown: str) -> tuple[dict, str, str]:
    """(config, Example code, "Use instead" code) as a user copies them from the rendered doc."""
    example = markdown.split("## Example\n", 1)[1]
    bad_part, _, good_part = example.partition("Use instead:\n")
    good_part = good_part.split("\n## ", 1)[0]

    def parse(part: str) -> tuple[dict, str]:
        config: dict = {}
        code = ""
        for language, body in _FENCE.findall(part):
            if language == "toml":
                config = tomllib.loads(body)["tool"]["trio-lint"]
            else:
                code = body
        return config, code

    config, bad = parse(bad_part)
    good_config, good = parse(good_part)
    return config | good_config, bad, good


@pytest.mark.parametrize("rule", [r for r in RULES if r.values[0].INVALID])
def test_doc_example_fires_with_only_that_rule_selected(rule) -> None:
    explanation = catalogue()[rule.code]["explanation"]
    assert "## Example" in explanation and "Use instead:" in explanation, rule.code
    config, bad, good = _blocks(explanation)
    path = rule.INVALID[0].path  # the doc names a non-.py file ("In `bad.ipynb`:")
    if path != "example.py":
        assert f"In `{path}`:" in explanation
    only = {**config, "select": [rule.code]}
    assert any(d.code == rule.code for d in lint_source(bad, path, only)), bad
    good_path = rule.VALID[0].path
    assert not [d for d in lint_source(good, good_path, only) if d.code == rule.code], good


def _prose_lines(markdown: str) -> list[str]:
    return _FENCE.sub("", markdown).splitlines()


@pytest.mark.parametrize("code", ["PTR002", "PTR105", "PTR301", "PTR501"])
def test_rule_output_keeps_each_paragraph_on_one_line(code: str) -> None:
    """The terminal wraps prose once; a hard break mid-sentence ("the\\nspecific error classes")
    would show as a ragged paragraph."""
    text = rule_text(code)
    lines = _prose_lines(text)
    for before, after in itertools.pairwise(lines):
        if before.strip() and after.strip():
            assert re.match(r"\s*(?:[-*+] |\d+\. |\||#)", after) or before.startswith("#"), (
                code,
                before,
                after,
            )
    rule = get_rule(code)
    assert rule is not None
    first, second = rule.doc.split("## What it does\n", 1)[1].splitlines()[:2]
    if second.strip() and not re.match(r"\s*(?:[-*+] |\d+\. )", second):
        assert f"{first.strip()} {second.strip()}" in text  # the source's line break is gone


def test_the_generated_rules_reference_shows_the_rendered_examples() -> None:
    reference = (ROOT / "references" / "lint-rules.md").read_text(encoding="utf-8")
    sections = dict(re.findall(r"^## (PTR\d{3})\n(.*?)(?=^## PTR|\Z)", reference, re.S | re.M))
    for rule in all_rules():
        if rule.INVALID:
            section = sections[rule.code]
            assert "#### Example" in section and "Use instead:" in section, rule.code
            # ruff formats the reference's blocks, so compare the example's names, not its quotes
            last = rule.INVALID[0].code.rstrip("\n").splitlines()[-1]
            assert all(word in section for word in re.findall(r"\w{3,}", last)), rule.code
