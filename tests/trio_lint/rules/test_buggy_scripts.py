"""Each rule against a realistic buggy script, written the way a HuggingFace-habit assistant writes
PyTRIO code (scripts/PTRnnn_<rule>.py). Every buggy line carries a `# bug: CODE` marker; the lint
must report exactly those (line, code) pairs with the default rule selection, and the fixes must
re-parse, converge and match the reviewed `<script>.fixed.py` byte for byte."""

from __future__ import annotations

import ast

import pytest

from tests.trio_lint.rules._scripts import expected_findings, script_config, script_paths
from trio_lint import fix_source, lint_source
from trio_lint.rules import all_rules

CASES = [pytest.param(path, id=path.stem) for path in script_paths()]


@pytest.mark.parametrize("path", CASES)
def test_script_reports_exactly_its_bugs(path) -> None:
    source = path.read_text()
    config = script_config(source)
    found = sorted((d.line, d.code) for d in lint_source(source, path.name, config))
    assert found == expected_findings(source)


@pytest.mark.parametrize("path", CASES)
def test_script_fixes_parse_converge_and_keep_formatting(path) -> None:
    source = path.read_text()
    config = script_config(source)
    result = fix_source(source, path.name, config, unsafe=True)
    fixed_path = path.with_name(path.stem + ".fixed.py")
    if not result.fixed:
        assert result.source == source
        assert not fixed_path.exists(), f"{fixed_path.name} exists but nothing is fixable"
        return
    ast.parse(result.source)
    assert fix_source(result.source, path.name, config, unsafe=True).source == result.source
    assert fixed_path.exists(), f"review the fix and save it as {fixed_path.name}"
    assert result.source == fixed_path.read_text()
    fixed_codes = {d.code for d in result.fixed}
    assert not [d for d in result.remaining if d.code in fixed_codes and d.fix is not None]


def test_every_rule_has_a_script() -> None:
    covered = {path.stem.split("_", 1)[0] for path in script_paths()}
    assert any(path.name.startswith("clean_") for path in script_paths())
    rules = {rule.code for rule in all_rules() if not rule.code.startswith("PTR9")}
    assert rules <= covered, sorted(rules - covered)
