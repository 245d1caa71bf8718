"""Tinker code is read as Tinker code: a module that imports `tinker` (anywhere) and not `pytrio`
meets only the rules whose `sdks` name Tinker, so no finding on it rests on a PyTRIO-only fact."""

from __future__ import annotations

import ast
import textwrap

import pytest

from trio_lint import lint_source
from trio_lint.output.explain import rule_doc
from trio_lint.rules import all_rules
from trio_lint.rules.base import ALL_SDKS, PYTRIO
from trio_lint.semantics.binder import build_model

TINKER = {"sdk-modules": ["tinker"]}

# Every INVALID example of a rule that holds for PyTRIO alone, written against `tinker` instead
# (the same code one import further): each must stay quiet. The PyTRIO originals are flagged
# (test_rule_examples.py), so a quiet variant is the SDK check, not a missed shape.
PYTRIO_ONLY_CASES = [
    pytest.param(
        rule,
        textwrap.dedent(example.code),
        {k: v for k, v in example.config.items() if k != "sdk-modules"},
        id=f"{rule.code}-invalid{n}",
    )
    for rule in all_rules()
    if "tinker" not in rule.sdks
    for n, example in enumerate(rule.INVALID)
    if "import pytrio as trio\n" in textwrap.dedent(example.code)
]


def _findings(code: str, select: str, config: dict) -> list[str]:
    settings = {"select": [select], "force-sdk": True, **config}
    return [d.message for d in lint_source(code, "example.py", settings) if d.code == select]


def test_every_sdk_specific_rule_has_a_tinker_variant() -> None:
    assert len({case.values[0].code for case in PYTRIO_ONLY_CASES}) >= 20


@pytest.mark.parametrize(("rule", "code", "config"), PYTRIO_ONLY_CASES)
def test_a_pytrio_only_rule_is_quiet_on_the_same_code_for_tinker(rule, code, config) -> None:
    assert _findings(code, rule.code, config), "the PyTRIO original must be flagged"
    variant = code.replace("import pytrio as trio\n", "import tinker as trio\n")
    assert _findings(variant, rule.code, {**config, **TINKER}) == []


@pytest.mark.parametrize(
    ("code", "sdk"),
    [
        ("import tinker\n", "tinker"),
        ("import marimo\n@app.cell\ndef _():\n    import tinker\n    return (tinker,)\n", "tinker"),
        ("from tinker import types\n", "tinker"),
        ("import tinker\ndef f():\n    import pytrio\n", "pytrio"),
        ("import pytrio as trio\nimport tinker\n", "pytrio"),
        ("x = 1\n", "pytrio"),  # a helper handed its clients counts as PyTRIO code
    ],
)
def test_the_sdk_of_a_unit_counts_imports_at_any_depth(code: str, sdk: str) -> None:
    model = build_model(ast.parse(code), ("pytrio", "tinker"), "0.2.9")
    assert model.sdk == sdk


def test_a_tinker_module_keeps_only_rules_that_hold_for_tinker() -> None:
    # Nested import (a marimo cell): PTR308's PyTRIO key fact must not apply, PTR101 still does.
    code = (
        "import marimo\n"
        "@app.cell\n"
        "def _(tc, batch):\n"
        "    import tinker\n"
        "    fb = tc.forward_backward(batch, 'cross_entropy').result()\n"
        "    print(fb.metrics['loss:sum'])\n"
        "    return tc.forward_backward(batch, 'cross_entropy').metrics\n"
    )
    found = {d.code for d in lint_source(code, "nb.py", {"force-sdk": True, **TINKER})}
    assert "PTR308" not in found
    assert "PTR101" in found
    pytrio = code.replace("import tinker", "import pytrio as trio")
    assert "PTR308" in {d.code for d in lint_source(pytrio, "nb.py", {"force-sdk": True})}


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.code)
def test_every_rule_doc_says_which_sdks_it_applies_to(rule) -> None:
    assert rule.sdks in (PYTRIO, ALL_SDKS)
    expected = "PyTRIO code and Tinker code" if "tinker" in rule.sdks else "PyTRIO code"
    assert f"\nApplies to: {expected}.\n" in rule_doc(rule)
