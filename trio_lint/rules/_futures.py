"""Reads of a PyTRIO future that PTR101 missing-result reports: the future of a call read as if it
were the response (`fb.metrics`, `tc.forward_backward(...).metrics`, `resp[0]`).

Shared by that rule and the conformance rules (`checkers/conformance.py`), which leave to it a
response's member read on a future (PTR101's `supersedes`: `base.RESPONSE_ON_FUTURE`), so that one
mistake gets one finding. Not a rule module (the registry skips names that start with `_`).
"""

from __future__ import annotations

import ast

from pytrio_facts.api_model import releases
from trio_lint.semantics.receivers import Kind, method_table

# Methods whose call returns a future on some pytrio release, read off the receiver model's
# method tables (so a method the SDK adds is covered without a list to keep in step). Only a
# cheap pre-check: the model decides whether a given call really returns a future.
FUTURE_METHODS = frozenset(
    name
    for release in releases()
    for table in method_table(release).values()
    for name, typ in table.items()
    if typ.is_future
)
# What may legitimately be done with a future (APIFuture and concurrent.futures.Future).
FUTURE_API = frozenset(
    {"result", "done", "exception", "cancel", "cancelled", "running", "map", "add_done_callback"}
)


def is_reference(expr: ast.expr) -> bool:
    """A name or `self.x`: a value bound elsewhere (the model says what it holds)."""
    return isinstance(expr, ast.Name) or (
        isinstance(expr, ast.Attribute)
        and isinstance(expr.value, ast.Name)
        and expr.value.id == "self"
    )


def checked_receiver(expr: ast.expr) -> bool:
    """The expressions PTR101 looks at when they hold a future: a reference, a call of one of
    `FUTURE_METHODS`, or `await` of a method call (one await of a two-await method)."""
    if isinstance(expr, ast.Await):
        return isinstance(expr.value, ast.Call) and isinstance(expr.value.func, ast.Attribute)
    if isinstance(expr, ast.Call):
        return isinstance(expr.func, ast.Attribute) and expr.func.attr in FUTURE_METHODS
    return is_reference(expr)


def noun(kind: Kind) -> str:
    """What the message calls the future: a `concurrent.futures.Future` (a RestClient sync call on
    0.2) is named, since the way to wait differs from an `APIFuture`'s."""
    return "a `concurrent.futures.Future`" if kind is Kind.CONCURRENT_FUTURE else "a future"


def wait_advice(kind: Kind, subject: str | None, *, in_async: bool) -> str:
    """How to get the value of a future of `kind`: `subject.result()`, or the call's `.result()`
    when `subject` is None. `await` is offered only inside `async def` (elsewhere it is a
    SyntaxError) and only for an `APIFuture`: it has `__await__` on every pytrio release, a
    `concurrent.futures.Future` has none."""
    result = f"`{subject}.result()`" if subject else "`.result()`"
    if not in_async:
        return f"call {result}"
    if kind is Kind.API_FUTURE:
        awaited = f"`await {subject}`" if subject else "`await` it"
        return f"call {result} (or {awaited})"
    return f"call {result} (it cannot be awaited)"
