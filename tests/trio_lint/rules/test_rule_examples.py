"""Every rule's documented VALID / INVALID examples, run as tests (Fixit style)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from trio_lint import fix_source, lint_source
from trio_lint.rules import all_rules
from trio_lint.rules.base import Invalid, Rule, Valid

VALID_CASES = [
    pytest.param(rule, example, id=f"{rule.code}-{rule.name}-valid{n}")
    for rule in all_rules()
    for n, example in enumerate(rule.VALID)
]
INVALID_CASES = [
    pytest.param(rule, example, id=f"{rule.code}-{rule.name}-invalid{n}")
    for rule in all_rules()
    for n, example in enumerate(rule.INVALID)
]


def _config(rule: type[Rule], example: Valid | Invalid) -> dict:
    return {"select": [rule.code], "force-sdk": True, **example.config}


@pytest.mark.parametrize(("rule", "example"), VALID_CASES)
def test_valid_example_has_no_finding(rule: type[Rule], example: Valid) -> None:
    code = textwrap.dedent(example.code)
    found = [
        d for d in lint_source(code, example.path, _config(rule, example)) if d.code == rule.code
    ]
    assert found == []


@pytest.mark.parametrize(("rule", "example"), INVALID_CASES)
def test_invalid_example_is_flagged_and_fixed(rule: type[Rule], example: Invalid) -> None:
    code = textwrap.dedent(example.code)
    config = _config(rule, example)
    found = [d for d in lint_source(code, example.path, config) if d.code == rule.code]
    assert found, f"{rule.code} did not flag:\n{code}"
    if example.line is not None:
        assert found[0].line == example.line
    if example.column is not None:
        assert found[0].column == example.column
    if example.message_contains is not None:
        assert any(example.message_contains in d.message for d in found), [d.message for d in found]
    if example.count is not None:
        assert len(found) == example.count

    result = fix_source(code, example.path, config, unsafe=True)
    if example.fixed is None:
        assert result.source == code, "the rule offers a fix but the example expects none"
        return
    expected = textwrap.dedent(example.fixed)
    assert result.source == expected
    if example.path.endswith((".py", ".pyi")):
        ast.parse(result.source)
    assert not [d for d in result.remaining if d.code == rule.code]
    assert fix_source(result.source, example.path, config, unsafe=True).source == result.source
    if example.unsafe:
        assert fix_source(code, example.path, config, unsafe=False).source == code
    else:
        assert fix_source(code, example.path, config, unsafe=False).source == expected
