"""Property tests on generated programs: linting never raises, fixes re-parse and converge."""

from __future__ import annotations

import ast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.lint import python_programs
from trio_lint import fix_source, lint_source

CONFIG = {"select": ["ALL"], "force-sdk": True}
PITFALLS = [
    "adam = trio.AdamParams(lr=1e-4)\n",
    "p = trio.SamplingParams(max_new_tokens=8, temperature=0.5)\n",
    "loss = tc.forward_backward(batch, 'cross_entropy').metrics\n",
    "from pytrio import Datum\nd = Datum\n",
    "x = trio.ModelInput.from_ints([-100, 1])\n",
]
SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def _no_internal_errors(source: str) -> None:
    diagnostics = lint_source(source, "gen.py", CONFIG)
    assert not [d for d in diagnostics if d.code == "PTR903"], diagnostics


@SETTINGS
@given(python_programs())
def test_lint_never_raises_on_generated_code(source: str) -> None:
    _no_internal_errors("import pytrio as trio\n" + source)
    _no_internal_errors(source)


@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@SETTINGS
@given(
    python_programs(),
    st.lists(st.sampled_from(PITFALLS), min_size=1, max_size=4),
)
def test_fixes_reparse_and_converge(source: str, pitfalls: list[str]) -> None:
    if not source.endswith("\n"):
        source += "\n"
    program = "import pytrio as trio\n" + source + "".join(pitfalls)
    try:
        ast.parse(program)
    except (SyntaxError, ValueError):
        return  # e.g. the generated code ends inside an open block
    first = fix_source(program, "gen.py", CONFIG, unsafe=True)
    ast.parse(first.source)
    second = fix_source(first.source, "gen.py", CONFIG, unsafe=True)
    assert second.source == first.source
    assert not second.fixed
    fixable_left = [d for d in first.remaining if d.fixable]
    assert fixable_left == [], fixable_left
