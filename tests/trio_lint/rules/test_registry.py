"""The rule registry: unique codes and names, complete metadata and docs, documented examples."""

from __future__ import annotations

import re

import flake8.defaults

from trio_lint.output.diagnostics import Applicability, Severity
from trio_lint.rules import all_rules, get_rule, select_rules
from trio_lint.settings.config import LintConfig

DOC_SECTIONS = ("## What it does", "## Why is this bad?", "## Fix safety")


def test_codes_and_names_are_unique() -> None:
    codes = [rule.code for rule in all_rules()]
    names = [rule.name for rule in all_rules()]
    assert len(codes) == len(set(codes)), sorted(codes)
    assert len(names) == len(set(names)), sorted(names)


def test_metadata_is_well_formed() -> None:
    for rule in all_rules():
        assert re.fullmatch(r"PTR\d{3}", rule.code), rule.code
        # flake8 accepts plugin codes of at most three letters (anchors.md 4.4).
        assert flake8.defaults.VALID_CODE_PREFIX.match(rule.code), rule.code
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name), rule.name
        module = rule.__module__.rsplit(".", 1)[-1]
        if not rule.code.startswith("PTR9"):
            assert module == rule.name.replace("-", "_"), (module, rule.name)
        assert isinstance(rule.severity, Severity)
        assert isinstance(rule.fix_safety, Applicability)
        for section in DOC_SECTIONS:
            assert section in rule.doc, (rule.code, section)
        assert rule.message


def test_every_rule_documents_examples() -> None:
    for rule in all_rules():
        if rule.code == "PTR903":  # internal-error cannot be provoked by valid code
            continue
        assert rule.VALID and rule.INVALID, rule.code
        if rule.fix_safety is not Applicability.NONE:
            assert any(example.fixed is not None for example in rule.INVALID), rule.code


def test_lookup_and_selection() -> None:
    assert get_rule("PTR201") is get_rule("hf-max-new-tokens")
    default = {rule.code for rule in select_rules(LintConfig())}
    assert "PTR201" in default and "PTR001" in default  # from-import is on (issue 4)
    assert "PTR210" not in default  # train-unembed-default is opt-in
    assert {r.code for r in select_rules(LintConfig(select=("PTR2",)))} >= {"PTR201", "PTR202"}
    chosen = {
        r.code for r in select_rules(LintConfig(extend_select=("PTR001",), ignore=("PTR202",)))
    }
    assert "PTR001" in chosen and "PTR202" not in chosen
