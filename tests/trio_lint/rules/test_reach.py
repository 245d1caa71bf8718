"""Reach by construction: every rule's documented examples, carried one route further
(`reach.py`), must keep INVALID flagged and VALID quiet -- except along the routes the rule
declares in `reach` (its doc's Limitations) or as not applicable."""

from __future__ import annotations

import pytest

from tests.trio_lint.rules.reach import check_route, routes, variants
from trio_lint.output.explain import rule_doc
from trio_lint.rules import all_rules
from trio_lint.rules.base import REACH_ROUTES, Rule

RULES = [r for r in all_rules() if not r.code.startswith("PTR9")]


def _show(variant) -> str:
    return f"[{variant.route}: {variant.what}]\n{variant.code}"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_variants_keep_the_examples_verdict(rule: type[Rule]) -> None:
    problems: list[str] = []
    for route in routes():
        outcome = check_route(rule, route)
        bad = [
            *(f"not flagged {_show(v)}" for v in outcome.misses),
            *(f"flagged {_show(v)}" for v in outcome.false),
        ]
        if route in rule.reach.limitations:
            if outcome.tried and not bad:
                problems.append(
                    f"{route} is declared a limitation but every variant passes: drop it"
                )
            continue
        problems += bad[:3]
    assert not problems, f"{rule.code}:\n" + "\n".join(problems)


@pytest.mark.parametrize("rule", [r for r in RULES if r.reach.limitations], ids=lambda r: r.code)
def test_limitations_are_in_the_users_doc(rule: type[Rule]) -> None:
    doc = rule_doc(rule)
    assert "## Limitations" in doc
    section = doc.split("## Limitations", 1)[1].split("\n## ", 1)[0]
    for route in rule.reach.limitations:
        assert REACH_ROUTES[route] in section, (rule.code, route)


def test_every_route_has_variants() -> None:
    """Each route applies to some example of some rule (a route that never fires tests nothing)."""
    empty = [
        route
        for route in routes()
        if not any(
            next(variants(example.code, route, set()), None) is not None
            for rule in RULES
            for example in rule.VALID
            if example.path.endswith(".py")  # Markdown examples are documents, not modules
        )
    ]
    assert empty == []


def test_routes_really_move_the_value() -> None:
    """The generator carries a bound value through the route it names (the route's shape is in
    the variant, the original binding is gone)."""
    code = "import pytrio as trio\nn = 64\nparams = trio.SamplingParams(max_tokens=n)\n"
    (variant,) = [v for v in variants(code, "class-attribute", set()) if "Settings.N" in v.code]
    assert "class Settings" in variant.code and "max_tokens=Settings.N" in variant.code
