"""PTR306 unshifted-weights: targets shifted by one, weights left at full length."""

from __future__ import annotations

import ast

from trio_lint.output.diagnostics import Severity
from trio_lint.rules._common import argument, sdk_line
from trio_lint.rules.base import Invalid, LooksAt, Rule, Valid, limited
from trio_lint.semantics.values import converted_argument


def _slice_bounds(expr: ast.expr) -> tuple[int | None, int | None] | None:
    """(lower, upper) for `X[a:b]` with literal bounds, else None."""
    if not (isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Slice)):
        return None
    return _bound(expr.slice.lower), _bound(expr.slice.upper)


def _bound(node: ast.expr | None) -> int | None:
    if node is None:
        return None
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _bound(node.operand)
        return -inner if inner is not None else None
    return None


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
    looks_at = LooksAt(sdk_calls=frozenset({"Datum"}))
    message = "`target_tokens` is shifted by one but `weights` is not: use `{name}[1:]`"
    severity = Severity.WARNING
    doc = """
## What it does
Flags a `Datum` whose `target_tokens` is `X[1:]` (or whose input is `X[:-1]`) while its `weights`
is a name bound to a full-length expression (`prompt_w + completion_w`, `[1.0] * n`, a
comprehension) and not sliced, also through a conversion (`np.asarray(w)`, `torch.tensor(w)`), or
sliced the other way (`w[:-1]`, `w[: len(targets)]`: the last weight dropped instead of the
first).

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
- (`029:client/training_batch.py:251-256`)
"""
    VALID = (
        Valid(
            "import numpy as np\nimport pytrio as trio\n"
            "def build(p, c):\n"
            "    tokens = p + c\n"
            "    mask = [0.0] * len(p) + [1.0] * len(c)\n"
            "    targets = tokens[1:]\n"
            "    weights = np.asarray(mask[1:])\n"
            "    return trio.Datum(model_input=trio.ModelInput.from_ints(tokens[:-1]),\n"
            "                      loss_fn_inputs={'target_tokens': targets, 'weights': weights})\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "def build(p, c):\n"
            "    tokens = p + c\n"
            "    targets = tokens[1:]\n"
            "    mask = [0.0] * len(p) + [1.0] * len(c)\n"
            "    return trio.Datum(model_input=trio.ModelInput.from_ints(tokens[:-1]),\n"
            "        loss_fn_inputs={'target_tokens': targets, 'weights': mask[1 : len(targets) + 1]})\n"
        ),
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
        Invalid(
            "import pytrio as trio\n"
            "def build(p, c):\n"
            "    tokens = p + c\n"
            "    weights = [0.0] * len(p) + [1.0] * len(c)\n"
            "    return trio.Datum(model_input=trio.ModelInput.from_ints(tokens[:-1]),\n"
            "        loss_fn_inputs={'target_tokens': tokens[1:], 'weights': weights[:-1]})\n",
            line=6,
            message_contains="use `weights[1:]`",
        ),
        Invalid(
            "import pytrio as trio\n"
            "def build(p, c):\n"
            "    tokens = p + c\n"
            "    targets = tokens[1:]\n"
            "    mask = [0.0] * len(p) + [1.0] * len(c)\n"
            "    return trio.Datum(model_input=trio.ModelInput.from_ints(tokens[:-1]),\n"
            "        loss_fn_inputs={'target_tokens': tokens[1:], 'weights': mask[: len(targets)]})\n",
            line=7,
            message_contains="dropped the first",
        ),
        Invalid(
            "import numpy as np\nimport pytrio as trio\n"
            "def build(p, c):\n"
            "    tokens = p + c\n"
            "    mask = [0.0] * len(p) + [1.0] * len(c)\n"
            "    weights = np.asarray(mask, dtype=np.float32)\n"
            "    return trio.Datum(model_input=trio.ModelInput.from_ints(tokens[:-1]),\n"
            "        loss_fn_inputs={'target_tokens': tokens[1:], 'weights': weights})\n",
            line=8,
            message_contains="use `mask[1:]`",
        ),
    )
    reach = limited(
        "class-attribute",
        "init-attribute",
        "helper-return",
        "call-site-parameter",
        "call-site-method-parameter",
        "pydantic-default",
        "config-dict",
        "loop-variable",
        "dict-entry-get",
        "annotated-parameter",
        "nested-coroutine-parameter",
        "queue-worker",
    )

    def visit_Call(self, node: ast.Call) -> None:
        if not self.model.is_sdk(node.func, "Datum"):
            return
        entries = self.model.dict_entries(argument(node, 1, "loss_fn_inputs")) or {}
        targets, weights = entries.get("target_tokens"), entries.get("weights")
        if targets is None or weights is None:
            return
        model_input = argument(node, 0, "model_input")
        inner = (
            model_input.args[0]
            if isinstance(model_input, ast.Call) and len(model_input.args) == 1
            else None
        )
        sequence = None
        if _slice_bounds(targets) == (1, None):
            sequence = targets.value  # type: ignore[attr-defined]  # a Subscript: it has slice bounds
        elif inner is not None and _slice_bounds(inner) == (None, -1):
            sequence = inner.value  # type: ignore[attr-defined]  # a Subscript: it has slice bounds
        if sequence is None:
            return
        name = sequence.id if isinstance(sequence, ast.Name) else None
        severity = Severity.ERROR if sdk_line(self.ctx) == "0.1" else Severity.WARNING
        value, shown = self._unwrap(weights)
        bounds = _slice_bounds(value)
        if bounds == (None, -1) or (bounds is not None and _len_upper(value)):
            base, base_name = self._unwrap(value.value)  # type: ignore[attr-defined]  # a Subscript: it has slice bounds
            if _full_length(base, name):
                self.report(
                    weights,
                    f"`{ast.unparse(value)}` drops the last weight, but the targets `"
                    f"{ast.unparse(targets)}` dropped the first: use `{base_name}[1:]`",
                    severity=severity,
                )
            return
        if shown is not None and _full_length(value, name):
            self.report(weights, self.message.format(name=shown), severity=severity)

    def _unwrap(self, expr: ast.expr) -> tuple[ast.expr, str | None]:
        """Follow names and conversions (`np.asarray(w)`, `list(w)`) back to the expression that
        built the weights; also the last name on the way (what the message tells to slice)."""
        shown = expr.id if isinstance(expr, ast.Name) else None
        for _ in range(8):
            if isinstance(expr, ast.Name):
                bound = self.model.bound_expression(expr)
                if bound is None:
                    break
                shown, expr = expr.id, bound
                continue
            converted = converted_argument(expr) if isinstance(expr, ast.Call) else None
            if converted is None:
                break
            expr = converted
            if isinstance(expr, ast.Name):
                shown = expr.id
        return expr, shown


def _len_upper(expr: ast.expr) -> bool:
    """`w[: len(...)]` / `w[0 : len(...)]`: cut to a length from the start."""
    part = expr.slice  # type: ignore[attr-defined]  # callers pass a Subscript with slice bounds
    upper = part.upper
    lower_ok = part.lower is None or (
        isinstance(part.lower, ast.Constant) and part.lower.value == 0
    )
    return (
        lower_ok
        and isinstance(upper, ast.Call)
        and isinstance(upper.func, ast.Name)
        and upper.func.id == "len"
    )
