"""PTR306 unshifted-weights: targets shifted by one, weights left at full length."""

from __future__ import annotations

import ast

from trio_lint.diagnostics import Severity
from trio_lint.rules._common import argument, sdk_line
from trio_lint.rules.base import Invalid, Rule, Valid


def _slice_bounds(expr: ast.expr) -> tuple[int | None, int | None] | None:
    """(lower, upper) for `X[a:b]` with literal bounds, else None."""
    if not (isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Slice)):
        return None

    def bound(node: ast.expr | None) -> int | None:
        if node is None:
            return None
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = bound(node.operand)
            return -inner if inner is not None else None
        return None

    return bound(expr.slice.lower), bound(expr.slice.upper)


def _full_length(expr: ast.expr, sequence: str | None) -> bool:
    """Expressions that build per-token weights over the whole sequence `sequence`:
    `prompt_w + completion_w`, `[1.0] * n`, or a comprehension over `range(len(sequence))`."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return True
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
        return isinstance(expr.left, ast.List) or isinstance(expr.right, ast.List)
    if isinstance(expr, ast.ListComp) and sequence is not None:
        it = expr.generators[0].iter
        if isinstance(it, ast.Call) and getattr(it.func, "id", None) == "range" and it.args:
            it = it.args[-1]
            if isinstance(it, ast.Call) and getattr(it.func, "id", None) == "len" and it.args:
                it = it.args[0]
        return isinstance(it, ast.Name) and it.id == sequence
    return False


class UnshiftedWeights(Rule):
    code = "PTR306"
    name = "unshifted-weights"
    message = "`target_tokens` is shifted by one but `weights` is not: use `{name}[1:]`"
    severity = Severity.WARNING
    doc = """
## What it does
Flags a `Datum` whose `target_tokens` is `X[1:]` (or whose input is `X[:-1]`) while its `weights`
is a name bound in the same function to a full-length expression (`prompt_w + completion_w`,
`[1.0] * n`, a comprehension) and not sliced.

## Why is this bad?
After the shift the weights are one longer than the targets and misaligned by one position: the
last prompt token's prediction is trained and the last completion token's is not. 0.2.9 rejects
the length mismatch with `ValueError: weights must have shape [n]`, so it is a warning there; 0.1.13 sends the mismatched
weights unchecked, so on 0.1 it is an error.

## Fix safety
No fix: where the weights were meant to start is the author's decision.

## References
- pytrio 0.2.9: `pytrio.Datum`, `pytrio.ModelInput.from_ints`
"""
    evidence = """
- api-diff.md pitfall 22, row 19; TRIO015
- (`029:client/training_batch.py:251-256`)
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "def build(p, c):\n"
            "    tokens = p + c\n"
            "    weights = [0.0] * len(p) + [1.0] * len(c)\n"
            "    return trio.Datum(model_input=trio.ModelInput.from_ints(tokens[:-1]),\n"
            "                      loss_fn_inputs={'target_tokens': tokens[1:], 'weights': weights[1:]})\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "def build(p, c):\n"
            "    tokens = p + c\n"
            "    weights = ([0.0] * len(p) + [1.0] * len(c))[1:]\n"
            "    return trio.Datum(model_input=trio.ModelInput.from_ints(tokens[:-1]),\n"
            "                      loss_fn_inputs={'target_tokens': tokens[1:], 'weights': weights})\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "def build(inp, tgt, w):\n"
            "    return trio.Datum(model_input=trio.ModelInput.from_ints(inp),\n"
            "                      loss_fn_inputs={'target_tokens': tgt, 'weights': w})\n"
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "def build(p, c):\n"
            "    tokens = p + c\n"
            "    weights = [0.0] * len(p) + [1.0] * len(c)\n"
            "    return trio.Datum(model_input=trio.ModelInput.from_ints(tokens[:-1]),\n"
            "                      loss_fn_inputs={'target_tokens': tokens[1:], 'weights': weights})\n",
            line=6,
        ),
        Invalid(
            "import pytrio as trio\n"
            "mask = [1.0 if i >= n else 0.0 for i in range(len(ids))]\n"
            "d = trio.Datum(trio.ModelInput.from_ints(ids[:-1]),\n"
            "               {'target_tokens': ids[1:], 'weights': mask})\n",
            config={"target-version": "0.1"},
            message_contains="mask[1:]",
        ),
        Invalid(
            "import pytrio as trio\n"
            "def build(p, c):\n"
            "    w = [0] * len(p) + [1] * len(c)\n"
            "    t = p + c\n"
            "    return trio.Datum(model_input=trio.ModelInput.from_ints(t[:-1]),\n"
            "                      loss_fn_inputs={'weights': w, 'target_tokens': t[1:]})\n",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._bound: list[dict[str, ast.expr]] = [{}]

    def visit_FunctionDef(self, node: ast.AST) -> None:
        self._bound.append({})

    visit_AsyncFunctionDef = visit_FunctionDef

    def leave_FunctionDef(self, node: ast.AST) -> None:
        self._bound.pop()

    leave_AsyncFunctionDef = leave_FunctionDef

    def leave_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            if isinstance(target, ast.Name):
                self._bound[-1][target.id] = node.value

    def visit_Call(self, node: ast.Call) -> None:
        if not self.model.is_sdk(node.func, "Datum"):
            return
        inputs = argument(node, 1, "loss_fn_inputs")
        if not isinstance(inputs, ast.Dict):
            return
        values = {
            k.value: v
            for k, v in zip(inputs.keys, inputs.values, strict=True)
            if isinstance(k, ast.Constant)
        }
        targets, weights = values.get("target_tokens"), values.get("weights")
        if targets is None or not isinstance(weights, ast.Name):
            return
        model_input = argument(node, 0, "model_input")
        inner = (
            model_input.args[0]
            if isinstance(model_input, ast.Call) and len(model_input.args) == 1
            else None
        )
        sequence = None
        if _slice_bounds(targets) == (1, None):
            sequence = targets.value  # type: ignore[attr-defined]
        elif inner is not None and _slice_bounds(inner) == (None, -1):
            sequence = inner.value  # type: ignore[attr-defined]
        if sequence is None:
            return
        name = sequence.id if isinstance(sequence, ast.Name) else None
        bound = self._bound[-1].get(weights.id)
        if bound is not None and _full_length(bound, name):
            severity = Severity.ERROR if sdk_line(self.ctx) == "0.1" else Severity.WARNING
            self.report(weights, self.message.format(name=weights.id), severity=severity)
