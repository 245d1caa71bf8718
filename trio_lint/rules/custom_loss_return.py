"""PTR307 custom-loss-return: a `forward_backward_custom` loss that returns only the loss."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from trio_lint.output.diagnostics import Applicability, Severity
from trio_lint.rules._common import argument
from trio_lint.rules.base import PYTRIO, Invalid, LooksAt, Rule, Valid, edit, limited, safe_fix

if TYPE_CHECKING:
    import libcst as cst

_METHODS = ("forward_backward_custom", "forward_backward_custom_async")


def _add_empty_metrics(node: cst.CSTNode) -> cst.CSTNode:
    import libcst as cst

    assert isinstance(node, cst.Return) and node.value is not None
    pair = cst.Tuple(
        elements=[
            cst.Element(node.value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
            cst.Element(cst.Dict([])),
        ],
        lpar=[],
        rpar=[],
    )
    return node.with_changes(value=pair)


def _lambda_pair(node: cst.CSTNode) -> cst.CSTNode:
    import libcst as cst

    assert isinstance(node, cst.Lambda)
    pair = cst.Tuple(
        elements=[
            cst.Element(node.body, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
            cst.Element(cst.Dict([])),
        ]
    )
    return node.with_changes(body=pair)


def _not_a_pair(expr: ast.expr | None) -> bool:
    """Clearly not a (loss, metrics) tuple: a call, arithmetic, an attribute or a subscript."""
    return isinstance(expr, ast.Call | ast.BinOp | ast.Attribute | ast.UnaryOp | ast.Subscript)


def _called_here(model, expr: ast.expr | None) -> bool:
    """A call of a function or method this module defines (a helper building the pair), or an
    item or attribute bound to a known value elsewhere (as a name would be): the return's syntax
    alone proves nothing then."""
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant):
        entries = model.dict_entries(expr.value)
        return bool(entries) and expr.slice.value in entries
    if isinstance(expr, ast.Attribute):
        return model.value_of(expr) is not None
    if not isinstance(expr, ast.Call):
        return False
    func = expr.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    return name is not None and model.defines(name)


class CustomLossReturn(Rule):
    code = "PTR307"
    sdks = PYTRIO  # its facts are PyTRIO's `forward_backward_custom` contract
    looks_at = LooksAt(calls=frozenset(_METHODS))
    name = "custom-loss-return"
    message = (
        "A `forward_backward_custom` loss must return `(loss, metrics)`: return `{value}, {{}}`"
    )
    severity = Severity.ERROR
    fix_safety = Applicability.SAFE
    doc = """
## What it does
Flags a function or lambda passed as `loss_fn` to `forward_backward_custom` (or `_async`) whose
`return` value is clearly a single tensor (a call, arithmetic, attribute or subscript) instead of
a `(loss, metrics)` pair.

## Why is this bad?
The SDK unpacks the result as `loss, custom_metrics = loss_fn(...)`: a scalar tensor raises "cannot unpack a 0-d tensor" after the
remote forward pass was already paid for.

## Fix safety
`return X` -> `return X, {}` is safe: the SDK merges the metrics as
`{**result.metrics, **custom_metrics}`, so an empty dict adds
nothing.

## References
- pytrio 0.2.9: `pytrio.TrainingClient.forward_backward_custom`
"""
    evidence = """
- (`013:lib/training_client.py:218`, `029:client/training.py:460-462`)
- (`029:client/training.py:502-511`)
"""
    VALID = (
        Valid(
            "import pytrio as trio\nimport torch\n"
            "def my_loss(data, logprobs):\n"
            "    loss = -torch.stack([lp.sum() for lp in logprobs]).mean()\n"
            "    return loss, {'loss': loss.item()}\n"
            "train.forward_backward_custom(batch, my_loss).result()\n"
        ),
        Valid(
            "import pytrio as trio\nimport torch\n"
            "def mse(pred, target):\n"
            "    return ((pred - target) ** 2).mean()\n"
            "loss = mse(model(x), y)\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "def my_loss(data, logprobs):\n"
            "    result = compute(data, logprobs)\n"
            "    return result\n"
            "train.forward_backward_custom(batch, loss_fn=my_loss)\n"
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\nimport torch\n"
            "def my_loss(data, logprobs):\n"
            "    return -torch.stack([lp.sum() for lp in logprobs]).mean()\n"
            "fut = train.forward_backward_custom(batch, my_loss)\n",
            fixed="import pytrio as trio\nimport torch\n"
            "def my_loss(data, logprobs):\n"
            "    return -torch.stack([lp.sum() for lp in logprobs]).mean(), {}\n"
            "fut = train.forward_backward_custom(batch, my_loss)\n",
            line=4,
        ),
        Invalid(
            "import pytrio as trio\n"
            "fut = train.forward_backward_custom(batch, loss_fn=lambda d, lp: lp[0].sum())\n",
            fixed="import pytrio as trio\n"
            "fut = train.forward_backward_custom(batch, loss_fn=lambda d, lp: (lp[0].sum(), {}))\n",
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch):\n"
            "    def loss_fn(data, logprobs):\n"
            "        total = sum(lp.sum() for lp in logprobs)\n"
            "        return total / len(logprobs)\n"
            "    return await train.forward_backward_custom_async(batch, loss_fn)\n",
            fixed="import pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch):\n"
            "    def loss_fn(data, logprobs):\n"
            "        total = sum(lp.sum() for lp in logprobs)\n"
            "        return total / len(logprobs), {}\n"
            "    return await train.forward_backward_custom_async(batch, loss_fn)\n",
        ),
    )
    reach = limited(
        "in-method",
        **{
            "dict-entry-get:valid": "the route reads the value with `.get()` where the example's shape needs the name itself"
        },
        **{
            "nested-coroutine-parameter:valid": "the route wraps the example's return in `asyncio.run(...)` of a nested coroutine"
        },
        **{"queue-worker:valid": "the route wraps the example's return in a worker coroutine"},
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._checked: set[int] = set()

    def visit_Call(self, node: ast.Call) -> None:
        found = self.model.client_call(node, methods=_METHODS)
        if found is None or found[1] not in _METHODS:
            return
        loss = argument(node, 1, "loss_fn")
        if isinstance(loss, ast.Name):
            func = self.model.function_of(loss)
            if func is not None and id(func) not in self._checked:
                self._checked.add(id(func))
                self._check_returns(func)
        elif (
            isinstance(loss, ast.Lambda)
            and _not_a_pair(loss.body)
            and not _called_here(self.model, loss.body)
        ):
            fix = safe_fix("Return `(loss, {})`", edit(loss, "Lambda", _lambda_pair))
            self.report(loss.body, self.message.format(value=ast.unparse(loss.body)), fix=fix)

    def _check_returns(self, func: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        returned = {id(value) for value in self.model.returns(func)}  # not nested functions'
        for node in ast.walk(func):
            if (
                isinstance(node, ast.Return)
                and id(node.value) in returned
                and _not_a_pair(node.value)
                and not _called_here(self.model, node.value)
            ):
                fix = safe_fix("Return `(loss, {})`", edit(node, "Return", _add_empty_metrics))
                value = ast.unparse(node.value)  # type: ignore[arg-type]  # not None: a returned value
                self.report(node.value, self.message.format(value=value), fix=fix)  # type: ignore[arg-type]  # not None: a returned value
