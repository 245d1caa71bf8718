"""`Rule.looks_at` (what a checker looks at: `LooksAt.calls`, `sdk_calls`, `attributes`, `keys`,
`receivers`) only saves work: a rule called for every call, attribute and item finds exactly
what it finds when the walk calls it for its declared calls, attribute names and string keys alone,
and for the attributes and items of the names the model knows as it declares.

Run over every rule's examples, the buggy scripts and this repository's PyTRIO code (examples,
eval solutions, demo), so an under-declared filter (a rule whose `visit_Call` also looks at
calls it did not declare, or whose `visit_Attribute` reports an attribute name it did not declare)
fails here rather than losing findings silently.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from trio_lint.lint.dispatch import run_rules
from trio_lint.lint.parse import SourceError, parse
from trio_lint.rules import all_rules
from trio_lint.rules.base import EVERYTHING
from trio_lint.settings.config import config_from_mapping

ROOT = Path(__file__).resolve().parents[3]
# The fields of a `LooksAt`; each narrows nothing when None.
FILTERS = ("calls", "sdk_calls", "attributes", "keys", "receivers")
# A checker and the rules of its codes (a rule is mostly the checker of its own code).
CHECKERS: dict[type, list] = {}
for _rule in all_rules():
    CHECKERS.setdefault(_rule.checker, []).append(_rule)
FILTERED = [
    pytest.param(checker, id=checker.__name__ if len(rules) > 1 else rules[0].code)
    for checker, rules in CHECKERS.items()
    if checker.looks_at != EVERYTHING
]


def _unfiltered(checker) -> list:
    """The rules of `checker`'s codes, walked by a copy of it that looks at everything."""
    rules = CHECKERS[checker]
    if rules == [checker]:
        return [type(checker.__name__, (checker,), {"looks_at": EVERYTHING})]
    walker = type(checker.__name__, (checker,), {"looks_at": EVERYTHING})
    return [type(rule.__name__, (rule,), {"checker": walker}) for rule in rules]


def _corpus() -> list[tuple[str, str, dict]]:
    """(name, source, [tool.trio-lint] keys) of every example and PyTRIO script we have."""
    sources = [
        (f"{rule.code} example {i}", textwrap.dedent(example.code), example.config)
        for rule in all_rules()
        for i, example in enumerate([*rule.VALID, *rule.INVALID])
    ]
    for directory in ("tests/trio_lint/rules/scripts", "examples", "tests/evals/solutions", "demo"):
        for path in sorted((ROOT / directory).rglob("*.py")):
            sources.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8"), {}))
    return sources


CORPUS = _corpus()


def _findings(rules: list, source: str, config) -> list[tuple]:
    try:
        tree = parse(source)
    except SourceError:  # the examples of the syntax-error rule
        return []
    return sorted(
        (f.code, f.span.line, f.span.col, f.message) for f in run_rules(tree, source, config, rules)
    )


def test_the_corpus_exercises_the_filters() -> None:
    assert len(CORPUS) > 400
    for name in FILTERS:
        assert any(getattr(checker.looks_at, name) is not None for checker in CHECKERS), name
    assert any(len(rules) > 1 for rules in CHECKERS.values()), "a checker of several codes"


@pytest.mark.parametrize("checker", FILTERED)
def test_a_filtered_checker_finds_what_it_finds_unfiltered(checker) -> None:
    rules, unfiltered = CHECKERS[checker], _unfiltered(checker)
    found: set[str] = set()
    for target in ("0.2.9", "0.1.12"):
        for name, source, keys in CORPUS:
            config = config_from_mapping({"target-version": target, **keys}, origin="test")
            filtered = _findings(rules, source, config)
            assert filtered == _findings(unfiltered, source, config), (checker, target, name)
            found.update(code for code, *_ in filtered)
    # Every code of the checker is found somewhere, or the test proves nothing for it.
    assert found == {rule.code for rule in rules}, found
