"""The catalogue's documentation contract: every rule carries enough examples, cites public
references (SDK version + public symbol, or a URL) and states its version gate and SDK scope
consistently."""

from __future__ import annotations

import re

import pytest

from trio_lint.output.diagnostics import Applicability
from trio_lint.rules import all_rules

RULES = [
    pytest.param(rule, id=rule.code) for rule in all_rules() if not rule.code.startswith("PTR9")
]
# "- pytrio 0.2.9: `pytrio.configure`" or a bullet carrying a public URL.
PUBLIC_REFERENCE = re.compile(r"- (?:pytrio|tinker) \d+\.\d+\.\d+: `\S.*|- .*https://\S+.*")


@pytest.mark.parametrize("rule", RULES)
def test_rule_has_three_valid_and_three_invalid_examples(rule) -> None:
    assert len(rule.VALID) >= 3, rule.code
    assert len(rule.INVALID) >= 3, rule.code


@pytest.mark.parametrize("rule", RULES)
def test_rule_doc_has_every_section_and_public_references(rule) -> None:
    for section in ("## What it does", "## Why is this bad?", "## Fix safety", "## References"):
        assert section in rule.doc, (rule.code, section)
    # The Example and "Use instead" are rendered from INVALID[0] / VALID[0], never written by hand.
    assert "## Example" not in rule.doc and "Use instead" not in rule.doc, rule.code
    references = [
        line for line in rule.doc.split("## References", 1)[1].splitlines() if line.strip()
    ]
    assert references, rule.code
    for line in references:
        assert PUBLIC_REFERENCE.fullmatch(line.strip()), (rule.code, line)


@pytest.mark.parametrize("rule", RULES)
def test_fix_safety_matches_the_examples(rule) -> None:
    fixed = [example for example in rule.INVALID if example.fixed is not None]
    if rule.fix_safety is Applicability.NONE:
        assert not fixed, rule.code
    else:
        assert fixed, rule.code
        if rule.fix_safety is Applicability.UNSAFE:
            assert all(example.unsafe for example in fixed), rule.code


@pytest.mark.parametrize("rule", RULES)
def test_version_gated_rules_prove_their_gate(rule) -> None:
    """A rule gated to 0.2 has a VALID example showing 0.1 code stays quiet; a rule gated to 0.1
    shows every INVALID example under `target-version = "0.1"`."""
    if rule.min_sdk == "0.2":
        assert any(v.config.get("target-version") == "0.1" for v in rule.VALID), rule.code
    if rule.max_sdk == "0.2":
        assert all(i.config.get("target-version") == "0.1" for i in rule.INVALID), rule.code
