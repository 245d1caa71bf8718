"""Multi-code checkers (`rules/base.py` `Checker`): one walk reports several codes, each with its
own rule module (metadata, examples, wording), and selection, noqa and crashes keep working per
code as they do for a rule that is its own checker."""

from __future__ import annotations

import ast

import pytest

from trio_lint import lint_source
from trio_lint.lint.dispatch import check_tree, run_rules
from trio_lint.rules import _supersedes, all_rules, rules_by_code
from trio_lint.rules.base import Checker, Invalid, Rule
from trio_lint.rules.checkers import conformance as _conformance
from trio_lint.rules.checkers.conformance import ConformanceChecker, ConformanceRule
from trio_lint.rules.checkers.futures import FuturesChecker
from trio_lint.settings.config import config_from_mapping

# PTR003 (a method 0.2 removed) and PTR004 (a keyword 0.2.9 renamed) in one unit.
TWO_CODES = (
    "import pytrio as trio\n"
    "rest = trio.ServiceClient().create_rest_client()\n"
    "weights = rest.list_weights(page=1, page_size=50)\n"
    "trio.configure(timeout=600)\n"
)


def _codes(source: str, **keys) -> list[str]:
    return sorted(d.code for d in lint_source(source, "x.py", {"select": ["ALL"], **keys}))


def test_every_checker_declares_exactly_the_codes_whose_rules_name_it() -> None:
    named: dict[type[Checker], set[str]] = {}
    for rule in all_rules():
        named.setdefault(rule.checker, set()).add(rule.code)
    for checker, codes in named.items():
        assert set(checker.codes) == codes, checker.__name__
    several = {c.__name__ for c, codes in named.items() if len(codes) > 1}
    assert several == {"ConformanceChecker", "FuturesChecker"}
    assert set(ConformanceChecker.codes) == {
        "PTR003", "PTR004", "PTR005", "PTR006", "PTR007", "PTR203", "PTR212", "PTR213",
    }  # fmt: skip
    assert set(FuturesChecker.codes) == {"PTR101", "PTR102", "PTR104"}


def test_each_code_of_a_checker_keeps_its_own_rule_metadata() -> None:
    for code in (*ConformanceChecker.codes, *FuturesChecker.codes):
        rule = rules_by_code()[code]
        assert rule.doc and rule.INVALID and rule.VALID and rule.name, code
        assert rule.codes == (code,)


def test_one_walk_reports_each_selected_code_and_no_other() -> None:
    assert _codes(TWO_CODES) == ["PTR003", "PTR004"]
    assert _codes(TWO_CODES, select=["PTR004"]) == ["PTR004"]
    assert _codes(TWO_CODES, select=["PTR003"]) == ["PTR003"]
    assert _codes(TWO_CODES, ignore=["PTR003"]) == ["PTR004"]
    assert _codes(TWO_CODES, ignore=["removed-keyword"]) == ["PTR003"]  # by name too


def test_noqa_of_one_code_leaves_the_other_codes_of_the_checker() -> None:
    source = TWO_CODES.replace("page_size=50)\n", "page_size=50)  # noqa: PTR003\n")
    assert _codes(source) == ["PTR004"]


def test_the_futures_checker_reports_its_three_codes_in_one_unit() -> None:
    source = (
        "import pytrio as trio\n"
        "tc = trio.ServiceClient().create_lora_training_client(base_model='m')\n"
        "loss = tc.forward_backward([], 'cross_entropy').metrics\n"
        "tc.optim_step(trio.AdamParams(learning_rate=1e-4))\n"
        "async def go(sampler: trio.SamplingClient, p, sp):\n"
        "    return await (await sampler.sample_async(prompt=p, sampling_params=sp))\n"
    )
    ours = ["PTR1"]
    assert _codes(source, select=ours) == ["PTR101", "PTR102", "PTR104"]
    assert _codes(source, select=["PTR102", "PTR104"]) == ["PTR102", "PTR104"]
    # PTR104 applies from 0.2 only: on 0.1 the checker walks for the other two.
    assert _codes(source, select=ours, **{"target-version": "0.1.12"}) == ["PTR101", "PTR102"]


def test_a_rule_of_another_checker_may_not_walk_itself() -> None:
    with pytest.raises(TypeError, match="walks"):
        type(
            "Walks",
            (ConformanceRule,),
            {"code": "PTR004", "visit_Call": lambda self, node: None},
        )
    with pytest.raises(TypeError, match="does not declare PTR999"):
        type("Undeclared", (ConformanceRule,), {"code": "PTR999"})


def test_a_checker_reports_only_codes_it_declares() -> None:
    class Loose(Checker):
        codes = ("PTR003", "PTR004")

        def visit_Call(self, node: ast.Call) -> None:
            self.report(node, "x", code="PTR108")

    class Unnamed(Loose):
        def visit_Call(self, node: ast.Call) -> None:
            self.report(node, "x")  # two codes: which one?

    for checker, error in ((Loose, ValueError), (Unnamed, TypeError)):
        rules = [
            type(f"R{code}", (rules_by_code()[code],), {"checker": checker}) for code in ("PTR003",)
        ]
        config = config_from_mapping({}, origin="test")
        found = run_rules(ast.parse("f()\n"), "f()\n", config, rules)
        # The dispatch turns a checker's exception into one internal error (PTR903).
        assert [f.code for f in found] == ["PTR903"], checker
        assert error.__name__ in found[0].message


def test_a_crashing_checker_of_several_codes_costs_only_itself() -> None:
    class Crashing(ConformanceChecker):
        def visit_Call(self, node: ast.Call) -> None:
            raise RuntimeError("boom")

    rules = [
        type(rule.__name__, (rule,), {"checker": Crashing})
        for rule in all_rules()
        if rule.checker is ConformanceChecker
    ]
    others = [rules_by_code()["PTR102"]]
    config = config_from_mapping({}, origin="test")
    source = TWO_CODES + "tc = trio.ServiceClient().create_lora_training_client(base_model='m')\n"
    source += "tc.optim_step(trio.AdamParams(learning_rate=1e-4))\n"
    found = run_rules(ast.parse(source), source, config, [*rules, *others])
    codes = sorted(f.code for f in found)
    # One internal error, named after the checker's first selected code; PTR102 still found.
    assert codes == ["PTR102", "PTR903"], codes
    assert "internal error in rule PTR003" in next(f.message for f in found if f.code == "PTR903")


def test_the_model_keeps_no_rule_state() -> None:
    config = config_from_mapping({}, origin="test")
    rules = [r for r in all_rules() if r.code in ("PTR003", "PTR004")]
    _, model = check_tree(ast.parse(TWO_CODES), TWO_CODES, config, rules)
    assert not hasattr(model, "memo")


def test_a_rule_is_the_checker_of_its_own_code() -> None:
    rule = rules_by_code()["PTR108"]
    assert rule.checker is rule and rule.codes == ("PTR108",)
    sub = type("Sub", (rule,), {})
    assert sub.checker is sub  # a subclass walks as itself
    assert isinstance(Invalid("x"), Invalid) and issubclass(rule, Rule)


@pytest.mark.parametrize(
    ("source", "owner"),
    [
        (
            "import pytrio as trio\n"
            "def f(sc: trio.SamplingClient, p, sp):\n"
            "    return sc.sample(prompt=p, num_samples=1, sampling_params=sp).result().samples\n",
            "PTR211",
        ),
        (
            "import pytrio as trio\nsp = trio.SamplingParams(max_tokens=8, max_new_tokens=8)\n",
            "PTR201",
        ),
        ("import pytrio as trio\nopt = trio.AdamParams(lr=1e-4)\n", "PTR202"),
        ("import pytrio as trio\nsvc = trio.ServiceClient()\nsvc.close()\n", "PTR404"),
    ],
)
def test_a_member_another_rule_supersedes_gets_that_rule_s_finding_alone(source, owner) -> None:
    """`Rule.supersedes`: the conformance checker leaves the member to its owner, whose message
    and fix are the better ones; without the owner's declaration it would report it too."""
    assert _codes(source) == [owner]
    declared = rules_by_code()[owner].supersedes
    assert declared
    _supersedes.supersession.cache_clear()
    _conformance._typed_member.cache_clear()
    _conformance._call_plan.cache_clear()
    try:
        rules_by_code()[owner].supersedes = frozenset()
        assert set(_codes(source)) - {owner}, "the conformance checker reports it too"
    finally:
        rules_by_code()[owner].supersedes = declared
        _supersedes.supersession.cache_clear()
        _conformance._typed_member.cache_clear()
        _conformance._call_plan.cache_clear()


def _clear_precedence_caches() -> None:
    _supersedes.supersession.cache_clear()
    _conformance._typed_member.cache_clear()
    _conformance._call_plan.cache_clear()


@pytest.mark.parametrize(
    ("read", "owner", "declaring"),
    [
        # A response's member read on its future: PTR101's (`RESPONSE_ON_FUTURE`).
        ("fut.model_dump()", "PTR101", "PTR101"),
        # A member of neither that the API data flags on the future: the conformance codes'
        # (`FUTURE_API_ISSUE`, declared by every `ConformanceRule`).
        ("fut.result_async()", "PTR213", "PTR213"),
    ],
)
def test_a_future_member_goes_to_the_checker_whose_supersedes_claims_it(
    read, owner, declaring
) -> None:
    """The futures and conformance checkers decide which of them reports a member read on a
    future only through `Rule.supersedes` (`rules/_supersedes.py`): without the owner's
    declaration the other checker reports it."""
    source = (
        "import pytrio as trio\n"
        "async def f(sc: trio.SamplingClient, p, sp):\n"
        "    fut = sc.sample(prompt=p, num_samples=1, sampling_params=sp)\n"
        f"    return {read}\n"
    )
    assert _codes(source) == [owner]
    rule = rules_by_code()[declaring]
    holder = ConformanceRule if issubclass(rule, ConformanceRule) else rule
    declared = holder.supersedes
    assert declared
    _clear_precedence_caches()
    try:
        holder.supersedes = frozenset()
        assert set(_codes(source)) - {owner}, "the other checker reports it then"
    finally:
        holder.supersedes = declared
        _clear_precedence_caches()
