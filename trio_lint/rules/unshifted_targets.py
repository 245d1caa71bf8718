"""PTR305 unshifted-targets: the same tokens as input and as target with `auto_shift=False`."""

from __future__ import annotations

import ast

from trio_lint.output.diagnostics import Severity
from trio_lint.rules._common import argument, same_tree
from trio_lint.rules.base import Invalid, LooksAt, Rule, Valid, limited


class UnshiftedTargets(Rule):
    code = "PTR305"
    name = "unshifted-targets"
    looks_at = LooksAt(sdk_calls=frozenset({"Datum"}))
    message = (
        "`target_tokens` equals the input tokens: each position must predict the NEXT token; "
        "use `model_input=from_ints(tokens[:-1])` and `target_tokens=tokens[1:]`"
    )
    severity = Severity.ERROR
    doc = """
## What it does
Flags `Datum(model_input=<trio>.ModelInput.from_ints(E), loss_fn_inputs={"target_tokens": E, ...})`
where both are the same expression, unless some call in the module passes `auto_shift=True`.

## Why is this bad?
With the default `auto_shift=False` the SDK scores `target_tokens[i]` as the prediction at input
position `i`; it checks only that the lengths match. Equal lists teach the model to copy its input: the loss
drops to near zero and nothing useful is learned. With `auto_shift=True` equal lists are the
intended use, so that case is not flagged.

## Fix safety
No fix: `weights`, `logprobs` and `advantages` need the same shift.

## References
- pytrio 0.2.9: `pytrio.Datum`, `pytrio.ModelInput.from_ints`
"""
    evidence = """
- (`013:types/forward/datum.py:50-53`, `029:client/training_batch.py:241-245`)
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "d = trio.Datum(model_input=trio.ModelInput.from_ints(tokens[:-1]),\n"
            "               loss_fn_inputs={'target_tokens': tokens[1:]})\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "d = trio.Datum(model_input=trio.ModelInput.from_ints(tokens),\n"
            "               loss_fn_inputs={'target_tokens': tokens})\n"
            "train.forward_backward([d], 'cross_entropy', auto_shift=True)\n"
        ),
        Valid(
            "import pytrio as trio\nfrom transformers import AutoModelForCausalLM\n"
            "out = model(input_ids=ids, labels=ids)\n"
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "d = trio.Datum(model_input=trio.ModelInput.from_ints(tokens),\n"
            "               loss_fn_inputs={'target_tokens': tokens, 'weights': w})\n",
            line=3,
        ),
        Invalid(
            "import pytrio as trio\n"
            "def build(p, c):\n"
            "    return trio.Datum(trio.ModelInput.from_ints(p + c), {'target_tokens': p + c})\n",
        ),
        Invalid(
            "from pytrio import Datum, ModelInput\n"
            "d = Datum(model_input=ModelInput.from_ints(ex['ids']),\n"
            "          loss_fn_inputs={'target_tokens': ex['ids']})\n",
        ),
        Invalid(
            "import tinker\n"
            "d = tinker.Datum(model_input=tinker.ModelInput.from_ints(tokens),\n"
            "                 loss_fn_inputs={'target_tokens': tokens, 'weights': w})\n",
            line=3,
            config={"sdk-modules": ["tinker"]},
        ),
    )
    reach = limited(
        "queue-worker",
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._found: list[ast.expr] = []
        # Some call of the unit passes `auto_shift=` (not False): a helper that shifts. Seen on
        # the keywords the dispatch hands over (a class's keywords are no call's).
        self._auto_shift = False
        self._class_keywords: set[int] = set()

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        if node.keywords:  # dispatched before its keywords: a node comes before its children
            self._class_keywords.update(id(kw) for kw in node.keywords)

    def visit_keyword(self, node: ast.keyword) -> None:
        if (
            node.arg == "auto_shift"
            and not (isinstance(node.value, ast.Constant) and node.value.value is False)
            and id(node) not in self._class_keywords
        ):
            self._auto_shift = True

    def visit_Call(self, node: ast.Call) -> None:
        if not self.model.is_sdk(node.func, "Datum"):
            return
        model_input = self._final(argument(node, 0, "model_input"))
        inputs = argument(node, 1, "loss_fn_inputs")
        if not isinstance(model_input, ast.Call):
            return
        if not (
            isinstance(model_input.func, ast.Attribute)
            and model_input.func.attr == "from_ints"
            and self.model.is_sdk(model_input.func.value, "ModelInput")
            and len(model_input.args) == 1
        ):
            return
        if isinstance(inputs, ast.Dict):
            pairs = [
                (key.value, value)
                for key, value in zip(inputs.keys, inputs.values, strict=True)
                if isinstance(key, ast.Constant)
            ]
        else:  # a dict built elsewhere (a name, `self.x`, a helper's return, `CONFIG["k"]`)
            entries = self.model.dict_entries(inputs) if inputs is not None else None
            pairs = list(entries.items()) if entries else []
        tokens = model_input.args[0]
        for key, value in pairs:
            if key == "target_tokens" and (
                same_tree(value, tokens) or same_tree(self._final(value), self._final(tokens))
            ):
                self._found.append(value)

    def _final(self, expr: ast.expr | None) -> ast.expr | None:
        """What a name (an attribute, a parameter's argument, a helper's return...) was last
        bound to, following the model step by step; the expression itself when unknown."""
        for _ in range(6):
            bound = self.model.value_of(expr) if expr is not None else None
            if bound is None:
                return expr
            expr = bound
        return expr

    def finish(self) -> None:
        if self._found and self._auto_shift:
            return
        for value in self._found:
            self.report(value)
