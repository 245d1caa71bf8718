"""Checking a unit leaves no reference cycle: its tree, model and rules are freed by reference
counting when the check returns, as an `ast` tree alone would be.

A cycle through the unit (a rule registered on state the model holds, a table of bound methods
on the model's pass, a context holding what holds it) keeps the whole tree and model alive until
the garbage collector next runs: memory a language server holds between collections, and
collector work the check pays for that a parse does not.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import textwrap
from pathlib import Path

import pytest

from trio_lint.lint.dispatch import check_tree
from trio_lint.lint.parse import SourceError, parse
from trio_lint.rules import all_rules, select_rules
from trio_lint.settings.config import config_from_mapping

ROOT = Path(__file__).resolve().parents[2]


def _sources() -> list[tuple[str, str, dict]]:
    found = [
        (f"{rule.code} example {i}", textwrap.dedent(example.code), example.config)
        for rule in all_rules()
        for i, example in enumerate([*rule.VALID, *rule.INVALID])
    ]
    for directory in ("tests/trio_lint/rules/scripts", "examples", "demo"):
        for path in sorted((ROOT / directory).rglob("*.py")):
            found.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8"), {}))
    return found


def _unit_garbage(check) -> list[object]:
    """The cyclic garbage of `check()` that is the linter's or a tree's: a cycle through a unit
    holds a node, a model or a rule. Other threads of the process (an SDK client a test in the
    same pytest worker left behind, with its connection pool) make cyclic garbage of their own
    meanwhile, which says nothing about the check."""
    return [
        o
        for o in _cyclic_garbage(check)
        if type(o).__module__.split(".")[0] in {"trio_lint", "ast", "pytrio_facts", "libcst"}
    ]


def _cyclic_garbage(check) -> list[object]:
    """The objects only the collector could free after `check()` ran."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        check()
        gc.collect()
        return list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()


def test_the_check_frees_every_unit_without_the_collector() -> None:
    sources = _sources()
    assert len(sources) > 400
    everything = config_from_mapping({"select": ["ALL"]}, origin="test")
    rules = select_rules(everything)
    # Process-wide caches fill on first use; what they keep is not per-unit garbage.
    for _name, source, _keys in sources:
        with contextlib.suppress(SourceError):
            check_tree(parse(source), source, everything, rules)

    def check_all() -> None:
        for _name, source, keys in sources:
            config = config_from_mapping({"select": ["ALL"], **keys}, origin="test")
            try:
                tree = parse(source)
            except SourceError:  # the syntax-error rule's examples
                continue
            check_tree(tree, source, config, select_rules(config))

    garbage = _unit_garbage(check_all)
    kinds = sorted({type(o).__qualname__ for o in garbage})
    assert garbage == [], f"{len(garbage)} objects in reference cycles: {kinds[:20]}"


def test_the_probe_sees_a_cycle() -> None:
    """The check above can fail: a unit tied into a cycle is found."""

    class Unit:
        pass

    def leak() -> None:
        unit = Unit()
        unit.self = unit

    garbage = _cyclic_garbage(leak)
    assert any(isinstance(o, Unit) for o in garbage)

    def leak_a_tree() -> None:  # and the filter keeps what a cycle through a unit holds
        tree = parse("x = 1\n")
        tree.body[0].parent = tree

    assert any(isinstance(o, ast.Module) for o in _unit_garbage(leak_a_tree))


@pytest.mark.parametrize("pytrio_only", [False, True])
def test_a_rule_context_of_either_flag_frees_its_unit(pytrio_only: bool) -> None:
    config = config_from_mapping({"select": ["ALL"]}, origin="test")
    source = "import pytrio as trio\nsc = trio.ServiceClient()\nsc.create_lora_training_client()\n"

    def check() -> None:
        from trio_lint.semantics.context import LintContext

        _, model = check_tree(parse(source), source, config, select_rules(config))
        ctx = LintContext(config, source, model).for_rule(pytrio_only)
        assert ctx.view.pytrio_only is pytrio_only

    assert _unit_garbage(check) == []
