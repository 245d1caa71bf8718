"""PTR301 minus-100-mask: HuggingFace's `-100` ignore label in PyTRIO token data."""

from __future__ import annotations

import ast

from trio_lint.output.diagnostics import Severity
from trio_lint.rules.base import Invalid, LooksAt, Rule, Valid, limited
from trio_lint.settings.target_version import before

# The first pytrio release whose client skips `-100` target ids (ignore label).
_IGNORE_LABEL_SINCE = "0.2.4"


def _is_minus_100(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        # `-100.0` in a float weight list is the same habit as the int label.
        and type(node.operand.value) in (int, float)
        and node.operand.value == 100
    )


# Array builders whose arguments become items: `torch.where(m, ids, -100)`, `np.full(n, -100)`.
_FILLERS = frozenset({"where", "full", "full_like", "fill", "masked_fill", "pad"})


def _inside(node: ast.expr, outer: ast.expr) -> bool:
    start = (node.lineno, node.col_offset)
    end = (node.end_lineno or 0, node.end_col_offset or 0)  # parsed code: never None
    return (outer.lineno, outer.col_offset) <= start and end <= (
        outer.end_lineno or 0,
        outer.end_col_offset or 0,
    )


class Minus100Mask(Rule):
    code = "PTR301"
    name = "minus-100-mask"
    looks_at = LooksAt(sdk_calls=frozenset({"Datum", "ModelInput.from_ints"}))
    message = "`-100` in `model_input`: PyTRIO rejects it as an out-of-vocabulary token"
    severity = Severity.ERROR
    doc = """
## What it does
Flags the Hugging Face ignore label `-100` where the SDK reads it as a token id or a weight.
- in `ModelInput.from_ints(...)` (the model's input tokens): an **error**;
- in `loss_fn_inputs["weights"]`: an **error** (a weight, not a label);
- in `loss_fn_inputs["target_tokens"]` only where the target SDK has no ignore label: pytrio
  before 0.2.4 (`target-version = "0.1"` or `"0.2.3"`) and Tinker code (a **warning**).
Names bound in the same module to an expression containing `-100` count too, as do names whose
items are later set to `-100` (`labels[:n] = -100`).

## Why is this bad?
pytrio validates input tokens against the vocabulary and raises a `ValidationError` for `-100`.
In `weights`, `-100` is accepted as a number: it multiplies those positions' loss by -100, so
training climbs the loss there and diverges. In `target_tokens`, pytrio 0.2.4 and later treat
`-100` as an ignore label (the position is left out of the loss and of `token_count`), so
`labels[:n_prompt] = -100` is a valid way to mask a prompt there; older releases and Tinker send
it to the server as a token id, so mask with per-token `weights` (0.0 for the prompt, 1.0 for
the completion) instead.

## Fix safety
No fix: the mask has to become a `weights` list aligned with the shifted targets.

## References
- pytrio 0.2.9: `pytrio.ModelInput.from_ints`, `pytrio.Datum`, `pytrio.TrainingClient.forward_backward`
- pytrio 0.2.4: `pytrio.TrainingClient.forward_backward` (first release that skips `-100` targets)
"""
    evidence = """
- Target ids equal to -100 are not counted as active tokens from 0.2.4
  (`024:client/training_batch.py:141-144,161-163`); 0.2.9 also skips their vocabulary check
  (`029:client/training_batch.py:273-293,326-343`); 0.2.0 has no `-100` handling anywhere (no
  `client/training_batch.py`: `020:client/training.py`).
- Measured on public code: -100 targets flagged on 0.2.x were all valid code.
- Input token ids outside the vocabulary, -100 included, raise ValidationError
  (`029:client/training_batch.py:197-212`).
"""
    VALID = (
        Valid(
            "import pytrio as trio\nx = trio.ModelInput.from_ints([5, 6])\n"
            "d = trio.Datum(model_input=x, loss_fn_inputs={'target_tokens': [-100, 7]})\n",
        ),
        Valid(
            "import pytrio as trio\n"
            "labels = list(ids)\n"
            "labels[:n_prompt] = -100\n"
            "d = trio.Datum(model_input=trio.ModelInput.from_ints(ids[:-1]),\n"
            "               loss_fn_inputs={'target_tokens': labels[1:]})\n",
            config={"target-version": "0.2.9"},
        ),
        Valid(
            "import pytrio as trio\nd = trio.Datum(model_input=trio.ModelInput.from_ints([1, 2]),"
            " loss_fn_inputs={'target_tokens': [2, 3], 'weights': [0.0, 1.0]})\n"
        ),
        Valid(
            "import pytrio\nimport torch\nlabels = torch.full((4,), -100)\nloss = ce(x, labels)\n"
        ),
        Valid("import pytrio as trio\nx = trio.ModelInput.from_ints([100, 3])\n"),
        # The ignore label kept for torch's own loss; PyTRIO gets 0/1 weights.
        Valid(
            "import pytrio as trio\nimport torch\nIGNORE_INDEX = -100\n"
            "loss_fn = torch.nn.CrossEntropyLoss(ignore_index=IGNORE_INDEX)\n"
            "weights = [0.0 if i < n else 1.0 for i in range(len(ids))]\n"
            "d = trio.Datum(model_input=trio.ModelInput.from_ints(ids),\n"
            "               loss_fn_inputs={'target_tokens': ids, 'weights': weights})\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "def mask(n, total):\n    w = [1.0] * total\n    w[:n] = [0.0] * n\n    return w\n"
            "d = trio.Datum(model_input=trio.ModelInput.from_ints(ids),\n"
            "               loss_fn_inputs={'target_tokens': ids, 'weights': mask(3, len(ids))})\n"
        ),
        Valid(
            "import pytrio as trio\nPAD = -100\n"
            "ids = [t for t in tokens if t != PAD]\n"
            "x = trio.ModelInput.from_ints(ids)\n"
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\nx = trio.ModelInput.from_ints([-100, 5, 6])\n",
            line=2,
            column=32,
            message_contains="model_input",
        ),
        Invalid(
            "import pytrio as trio\nlabels = [-100] * len(prompt) + completion\n"
            "d = trio.Datum(model_input=trio.ModelInput.from_ints(ids),"
            " loss_fn_inputs={'target_tokens': labels})\n",
            line=3,
            message_contains="weights",
            config={"target-version": "0.1"},
        ),
        Invalid(
            "import pytrio as trio\n"
            "weights = [-100.0] * len(prompt) + [1.0] * len(completion)\n"
            "d = trio.Datum(model_input=trio.ModelInput.from_ints(ids[:-1]),"
            " loss_fn_inputs={'target_tokens': ids[1:], 'weights': weights[1:]})\n",
            line=3,
            message_contains="`weights`",
        ),
        Invalid(
            "from pytrio import Datum, ModelInput\n"
            "d = Datum(ModelInput.from_ints(ids), {'target_tokens': [-100, 4]})\n",
            config={"target-version": "0.2.3"},
        ),
        Invalid(
            "import tinker\n"
            "d = tinker.Datum(model_input=tinker.ModelInput.from_ints(ids),\n"
            "                 loss_fn_inputs={'target_tokens': [-100, 4]})\n",
            message_contains="Tinker",
            config={"sdk-modules": ["pytrio", "tinker"]},
        ),
        Invalid(
            "import pytrio as trio\n"
            "mask = [-100 if i < n_prompt else 1.0 for i in range(len(targets))]\n"
            "d = trio.Datum(model_input=trio.ModelInput.from_ints(ids),\n"
            "               loss_fn_inputs={'target_tokens': targets, 'weights': mask})\n",
            line=4,
            message_contains="`weights`",
        ),
        Invalid(
            "import pytrio as trio\n"
            "labels = list(ids)\n"
            "labels[:n_prompt] = -100\n"
            "d = trio.Datum(model_input=trio.ModelInput.from_ints(ids[:-1]),\n"
            "               loss_fn_inputs={'target_tokens': labels[1:]})\n",
            line=5,
            config={"target-version": "0.1"},
        ),
        # -100 through a module constant into the weights.
        Invalid(
            "import pytrio as trio\nIGNORE_INDEX = -100\n"
            "def build(ids, n):\n"
            "    weights = [IGNORE_INDEX] * n + [1.0] * (len(ids) - n)\n"
            "    return trio.Datum(model_input=trio.ModelInput.from_ints(ids),\n"
            "        loss_fn_inputs={'target_tokens': ids, 'weights': weights})\n",
            line=6,
            message_contains="`weights`",
        ),
        # Slice assignment of a list, in a helper whose return value is the weights.
        Invalid(
            "import pytrio as trio\n"
            "def prompt_mask(n, total):\n    w = [1.0] * total\n    w[:n] = [-100] * n\n"
            "    return w\n"
            "d = trio.Datum(model_input=trio.ModelInput.from_ints(ids),\n"
            "               loss_fn_inputs={'target_tokens': ids, 'weights': prompt_mask(3, 9)})\n",
            line=7,
            message_contains="`weights`",
        ),
        # A comprehension over a module constant, into the model input via np.asarray.
        Invalid(
            "import numpy as np\nimport pytrio as trio\nPAD_ID = -100\n"
            "padded = [t if t is not None else PAD_ID for t in raw]\n"
            "x = trio.ModelInput.from_ints(np.asarray(padded).tolist())\n",
            line=5,
            message_contains="model_input",
        ),
        # The loss inputs as a dict built elsewhere and spread into the Datum.
        Invalid(
            "import pytrio as trio\n"
            "def inputs(ids, n):\n"
            "    return {'target_tokens': ids, 'weights': [-100] * n + [1.0] * (len(ids) - n)}\n"
            "d = trio.Datum(model_input=trio.ModelInput.from_ints(ids),\n"
            "               loss_fn_inputs={**inputs(ids, 2)})\n",
            message_contains="`weights`",
        ),
    )
    reach = limited(
        "class-attribute",
        "init-attribute",
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

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._calls: list[ast.Call] = []
        # Every finding traces back to a `-100` literal of this unit: without one (most units),
        # no call's values need tracing.
        self._literal = False

    def _source_of(self, expr: ast.expr) -> tuple[ast.expr | None, ast.expr]:
        """(the -100 literal, the node to report) for the value of `expr`, wherever its items were
        bound: a name, a module constant, a comprehension, `x[:n] = -100`, a helper's return..."""
        for origin in self.model.origins(expr):
            found: ast.expr | None = origin if _is_minus_100(origin) else None
            if (
                found is None
                and isinstance(origin, ast.Call)
                and isinstance(origin.func, ast.Attribute)
                and origin.func.attr in _FILLERS
            ):
                found = next(
                    (
                        a
                        for a in (*origin.args, *(k.value for k in origin.keywords))
                        if _is_minus_100(a)
                    ),
                    None,
                )
            if found is not None:
                return found, found if _inside(found, expr) else expr
        return None, expr

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if _is_minus_100(node):
            self._literal = True

    def visit_Call(self, node: ast.Call) -> None:
        self._calls.append(node)

    def finish(self) -> None:
        if self._literal:
            for node in self._calls:
                self._check(node)

    def _check(self, node: ast.Call) -> None:
        qualname = self.model.qualified_name(node.func)
        if qualname == "pytrio.ModelInput.from_ints":
            tokens = node.args[0] if node.args else _keyword(node, "tokens")
            if tokens is not None:
                found, where = self._source_of(tokens)
                if found is not None:
                    self.report(where)
        elif qualname == "pytrio.Datum":
            inputs = node.args[1] if len(node.args) > 1 else _keyword(node, "loss_fn_inputs")
            entries = self.model.dict_entries(inputs) or {}
            weights = entries.get("weights")
            if weights is not None:
                found, where = self._source_of(weights)
                if found is not None:
                    self.report(
                        where,
                        "`-100` in `weights`: a weight multiplies the loss (this one by -100, "
                        "which makes training diverge); use 0.0 to mask and 1.0 to train",
                    )
            targets = entries.get("target_tokens")
            sdk = self._sdk_without_ignore_label(node.func)
            if targets is not None and sdk is not None:
                found, where = self._source_of(targets)
                if found is not None:
                    self.report(
                        where,
                        f"`-100` in `target_tokens`: {sdk} has no ignore label (pytrio 0.2.4+ "
                        "skips `-100` targets); mask the prompt with `weights` (0.0) instead",
                        severity=Severity.WARNING,
                    )

    def _sdk_without_ignore_label(self, func: ast.expr) -> str | None:
        """The SDK the code targets, named for the message, if it sends `-100` targets to the
        server as token ids; None where the SDK skips them (pytrio 0.2.4 and later)."""
        root = func
        while isinstance(root, ast.Attribute):
            root = root.value
        binding = self.model.import_binding(root) if isinstance(root, ast.Name) else None
        if binding is not None and binding.origin != "pytrio":
            return binding.origin.capitalize()
        version = str(self.ctx.sdk_version)
        if before(version, _IGNORE_LABEL_SINCE):
            return f"pytrio {version}"
        return None


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    return None
