"""The rules' shared helpers that stand in for slower standard ones must answer alike."""

from __future__ import annotations

import ast

from hypothesis import given, settings
from hypothesis import strategies as st

from trio_lint.rules._common import same_tree, source_text, walk

_ATOMS = st.sampled_from(["x", "y", "tokens", "1", "-1", "0", "1.0", "True", "'a'", "None"])


def _expressions() -> st.SearchStrategy[str]:
    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.builds("{}[{}:]".format, inner, inner),
            st.builds("{}[:{}]".format, inner, inner),
            st.builds("{}[{}]".format, inner, inner),
            st.builds("({}).{}".format, inner, st.sampled_from(["a", "b"])),
            st.builds("{}({})".format, inner, inner),
            st.builds("({} + {})".format, inner, inner),
            st.builds("[{}, {}]".format, inner, inner),
            st.builds("{{{}: {}}}".format, inner, inner),
        )

    return st.recursive(_ATOMS, extend, max_leaves=6)


@settings(max_examples=400, deadline=None)
@given(_expressions(), _expressions())
def test_same_tree_agrees_with_comparing_dumps(a: str, b: str) -> None:
    left, right = ast.parse(a, mode="eval").body, ast.parse(b, mode="eval").body
    assert same_tree(left, right) == (ast.dump(left) == ast.dump(right))
    assert same_tree(left, ast.parse(a, mode="eval").body)  # positions do not count


def test_same_tree_tells_apart_what_dumps_tell_apart() -> None:
    pairs = [("1", "True"), ("1", "1.0"), ("x[1:]", "x[:-1]"), ("f(a=1)", "f(b=1)")]
    for a, b in pairs:
        assert not same_tree(ast.parse(a, mode="eval").body, ast.parse(b, mode="eval").body)
    nan = ast.Constant(float("nan"))
    assert same_tree(nan, ast.Constant(float("nan"))) == (ast.dump(nan) == ast.dump(nan))


@settings(max_examples=300, deadline=None)
@given(_expressions())
def test_source_text_is_what_unparse_gives(text: str) -> None:
    expr = ast.parse(text, mode="eval").body
    assert source_text(expr) == ast.unparse(expr)


_STATEMENTS = st.lists(
    st.sampled_from(
        [
            "x = f(a, *b, k=1, **c)",
            "async def g(p, /, q=1, *r, s, **t):\n    return [y async for y in q if y]",
            "for i in range(3):\n    del z[i]\nelse:\n    pass",
            "try:\n    raise E from e\nexcept (A, B) as e:\n    global n\nfinally:\n    ...",
            "with open(p) as fh, lock:\n    yield fh",
            "class C(B, metaclass=M):\n    a: int = 1\n    nonlocal_ok = lambda *a: a",
            "match v:\n    case Point(x=0, y=[1, *rest]) | {'k': _} if rest:\n        pass",
            "print(f'{a!r:>{w}}', {**d}, {1, 2}, (1,), not a, a if b else c)",
            "import a.b as c\nfrom . import d",
        ]
    ),
    max_size=6,
)


@settings(max_examples=200, deadline=None)
@given(_STATEMENTS, _expressions())
def test_walk_gives_the_nodes_ast_walk_gives(statements: list[str], expression: str) -> None:
    tree = ast.parse("\n".join([*statements, expression]))
    assert sorted(map(id, walk(tree))) == sorted(map(id, ast.walk(tree)))
    positions = [(n.lineno, n.col_offset) for n in walk(tree) if isinstance(n, ast.stmt)]
    assert positions == sorted(positions)  # source order, depth first
