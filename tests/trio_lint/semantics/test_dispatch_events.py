"""The semantic model's pass records the nodes the rules' dispatch visits (`build_model(events_for=
...)`), so no second walk of the tree is needed. The dispatch is only complete if every node of the
tree is recorded exactly once, after its parent, and before the `Leave` of each node holding it:
checked with every node class recorded, on our PyTRIO code, the rule examples, tricky shapes and
generated programs."""

from __future__ import annotations

import ast
import textwrap
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from tests.support.lint import python_programs
from trio_lint.lint.dispatch import rule_hooks
from trio_lint.lint.parse import SourceError, parse, parse_ast
from trio_lint.rules import all_rules
from trio_lint.semantics.binder import (
    ENTER,
    ENTER_AND_LEAVE,
    PASSED_BY,
    UNRECORDED,
    Leave,
    build_model,
)

ROOT = Path(__file__).resolve().parents[3]
# Every node class: the pass must record all of them, not only the ones today's rules hook.
EVERY_CLASS = {
    value: ENTER if value in PASSED_BY else ENTER_AND_LEAVE
    for value in vars(ast).values()
    if isinstance(value, type) and issubclass(value, ast.AST)
}

SHAPES = [
    # parameters, annotations, defaults, decorators, return annotations
    "@dec(trio.X)\ndef f(a: trio.A, /, b: list[trio.B] = g(), *c: int, d=h(), **e: trio.E)"
    " -> trio.R:\n    return a\n",
    "f = lambda a, b=trio.X(): a.b[0]\n",
    # binding targets of every kind
    "a, (b, *c), d.e, f[g.h] = x\nfor i, j.k in y: pass\nwith m() as (n, o.p), q(): pass\n",
    "x: trio.T = y\nz: int\nclass C(B, metaclass=M, k=trio.v):\n    f: trio.F\n    g: int = 1\n",
    "a += b.c\na.b += 1\na[b] -= c\nif (n := trio.x()) is not None: pass\n",
    "[a.b for c, d.e in f if g(c) for h in c]\n{k: v for k, v in d.items()}\n",
    "import a.b as c, d\nfrom e import (f as g, h)\nfrom . import i\nglobal j\n",
    "try:\n    pass\nexcept (A, B) as e:\n    raise C from e\nelse:\n    pass\nfinally:\n"
    "    del x, y.z\n",
    "match p:\n    case {'a': A(b=[c, *d])} if e.f: pass\n    case _: pass\n",
    "async def f():\n    async for a in b:\n        async with c as d:\n            await e\n",
    "def f():\n    def g():\n        nonlocal_x = f'{a.b!r:>{w}}'\n    class D: pass\n",
]


def _sources() -> list[tuple[str, str]]:
    found = [(f"shape {i}", source) for i, source in enumerate(SHAPES)]
    found += [
        (f"{rule.code} example {i}", textwrap.dedent(example.code))
        for rule in all_rules()
        for i, example in enumerate([*rule.VALID, *rule.INVALID])
    ]
    for directory in ("examples", "demo", "tests/trio_lint/rules/scripts", "trio_lint"):
        for path in sorted((ROOT / directory).rglob("*.py")):
            found.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")))
    return found


def _check_events(tree: ast.Module) -> None:
    events = build_model(tree, events_for=EVERY_CLASS).events
    entries = [e for e in events if not isinstance(e, Leave)]
    counts = Counter(map(id, entries))
    nodes = [node for node in ast.walk(tree) if not isinstance(node, UNRECORDED)]
    assert len(entries) == len(nodes), "every node recorded, none twice or from elsewhere"
    assert all(counts[id(node)] == 1 for node in nodes)
    entry = {id(e): i for i, e in enumerate(events) if not isinstance(e, Leave)}
    leave = {id(e.node): i for i, e in enumerate(events) if isinstance(e, Leave)}
    for node in nodes:
        if node.__class__ in PASSED_BY:
            assert id(node) not in leave
        else:
            assert id(node) in leave, f"no Leave for {ast.dump(node)[:80]}"
        for child in ast.iter_child_nodes(node):
            if isinstance(child, UNRECORDED):
                continue
            assert entry[id(node)] < entry[id(child)], f"{type(child).__name__} before its parent"
            if id(node) in leave:
                assert entry[id(child)] < leave[id(node)]
                if id(child) in leave:
                    assert leave[id(child)] < leave[id(node)]


@pytest.mark.parametrize(("name", "source"), _sources(), ids=lambda v: v if "\n" not in v else "")
def test_every_node_is_recorded_once_inside_its_parent(name: str, source: str) -> None:
    try:
        tree = parse(source)
    except SourceError:  # the syntax-error rule's examples
        return
    _check_events(tree)


# hypothesmith compiles what it generates to keep only valid programs; that compile warns about
# calls on literals ("'int' object is not callable"), which is the generator's business.
@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(python_programs())
def test_every_node_of_generated_code_is_recorded(source: str) -> None:
    try:
        tree = parse_ast(source)
    except (SyntaxError, ValueError, RecursionError):
        return
    _check_events(tree)


def test_without_events_for_nothing_is_recorded() -> None:
    assert build_model(ast.parse("def f(a: int):\n    return a.b\n")).events == []


@pytest.mark.parametrize("hook", ["leave_Attribute", "visit_Add", "leave_Load"])
def test_hooks_the_dispatch_cannot_serve_are_refused(hook: str) -> None:
    """A `leave_X` for a node recorded on entry only, or any hook on an operator or a context,
    would never run: it is refused when the rule is first used, naming the method."""
    from trio_lint.rules.base import Rule

    rule = type("Unserved", (Rule,), {"code": "PTR999", hook: lambda self, node: None})
    with pytest.raises(TypeError, match=hook):
        rule_hooks(rule)
