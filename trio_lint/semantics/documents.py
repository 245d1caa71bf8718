"""Catalogue blocks of a document: a Markdown block that lists the members of one object, one per
line, instead of running code.

    rest = service.create_rest_client()
    rest.list_training_runs()      # training runs
    rest.list_user_checkpoints()   # every checkpoint

    result.sequences               # list[SampleSequence]
    result.prompt_logprobs         # list[float | None]

Such a block documents an API (often under a heading that names the type of the object it
lists): the calls are not a program whose futures are dropped, and a name it reads without
binding is the object the heading names, not what an earlier block left in it. A block is a
catalogue when its statements are bare expressions (a call or an attribute read) on one receiver,
each naming another member (at least two reads, or three when any is a call: `forward_backward`
then `optim_step` is a step), beside imports and assignments of that receiver alone. Only
blocks of a document (`build_model(seed=...)`) are asked: a `.py` file is a program.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

__all__ = ["Catalogue", "catalogue"]


@dataclass(frozen=True, slots=True)
class Catalogue:
    """`lines`: ids of the listed expressions (the calls or attribute reads); `receiver`: the
    listed object's name when the block does not bind it (it is not typed from earlier blocks)."""

    lines: frozenset[int] = frozenset()
    receiver: str | None = None


NOT_A_CATALOGUE = Catalogue()


def _listed(statement: ast.stmt) -> tuple[ast.expr, str, str] | None:
    """(the expression, its receiver's source, the member) of `recv.m(...)` / `recv.attr`."""
    if not isinstance(statement, ast.Expr):
        return None
    value = statement.value
    member = value.func if isinstance(value, ast.Call) else value
    if not isinstance(member, ast.Attribute):
        return None
    receiver = member.value
    if not isinstance(receiver, ast.Name | ast.Attribute):
        return None
    return value, ast.unparse(receiver), member.attr


def catalogue(tree: ast.Module) -> Catalogue:
    """The catalogue a document block is (see the module docstring), else `NOT_A_CATALOGUE`."""
    listed: list[tuple[ast.expr, str, str]] = []
    assigned: list[ast.Assign | ast.AnnAssign] = []
    for statement in tree.body:
        if isinstance(statement, ast.Import | ast.ImportFrom):
            continue
        if isinstance(statement, ast.Assign | ast.AnnAssign):
            assigned.append(statement)
            continue
        found = _listed(statement)
        if found is None:
            return NOT_A_CATALOGUE
        listed.append(found)
    receivers = {receiver for _, receiver, _ in listed}
    members = [member for _, _, member in listed]
    calls = any(isinstance(expr, ast.Call) for expr, _, _ in listed)
    # Two calls in a row are a program's step as often as a list (`forward_backward` then
    # `optim_step`): calls make a catalogue from three on; bare attribute reads run nothing.
    if (
        len(listed) < (3 if calls else 2)
        or len(receivers) != 1
        or len(set(members)) != len(members)
    ):
        return NOT_A_CATALOGUE
    (receiver,) = receivers
    for statement in assigned:
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        if not all(isinstance(t, ast.Name) and t.id == receiver for t in targets):
            return NOT_A_CATALOGUE
    return Catalogue(
        frozenset(id(expr) for expr, _, _ in listed),
        receiver if not assigned and receiver.isidentifier() else None,
    )
