"""PTR308 wrong-metric-key: reading a loss metric under a key the SDK never produces."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from pytrio_facts.sdk import METRIC_KEYS, WRONG_METRIC_KEYS
from trio_lint.diagnostics import Applicability, Severity
from trio_lint.rules._common import replace_string_value, sdk_line
from trio_lint.rules.base import VALUE_ROUTES, Invalid, Rule, Valid, edit, limited, safe_fix
from trio_lint.semantics.receivers import Kind

if TYPE_CHECKING:
    pass

# `loss:sum` -> `loss_sum` is the same quantity (a safe rename); `loss`/`train_loss` could mean
# either the mean or the sum, so those are suggestions. Only known-wrong on 0.2: 0.1 passed the
# server's keys through (013:types/future/api_future.py:48-51).
_RENAMES = {key: new for key, new in WRONG_METRIC_KEYS.items() if ":" in key}
_SUGGESTIONS = {
    key: f"`{new}` (per token) or `loss_sum`"
    for key, new in WRONG_METRIC_KEYS.items()
    if ":" not in key
}
# The attribute spelling of the `"loss"` key (`result.loss`), the only one `visit_Attribute` reports.
_LOSS_ATTRIBUTE = "loss"


class WrongMetricKey(Rule):
    code = "PTR308"
    call_methods = frozenset({"get"})  # its visit_Call looks at nothing else
    attribute_names = frozenset({_LOSS_ATTRIBUTE})  # and its visit_Attribute at `.loss` alone
    subscript_keys = frozenset(_RENAMES) | frozenset(_SUGGESTIONS)  # and visit_Subscript: these
    name = "wrong-metric-key"
    message = "`metrics[{key!r}]` does not exist on pytrio 0.2: use {replacement}"
    severity = Severity.ERROR
    # Facts of PyTRIO's own SDK (not Tinker's): see the doc's References.
    pytrio_only = True
    fix_safety = Applicability.SAFE
    doc = f"""
## What it does
Flags a forward-backward result's metrics read under a key pytrio 0.2 never produces:
`metrics["loss:sum"]`, `metrics.get("loss:sum", 0.0)`, `metrics["loss"]`,
`metrics["train_loss"]`, and the attribute `result.loss`. The `"loss:sum"` key is recognised on
any `.metrics`; the other keys only on a known forward-backward result. Keys are only checked on
0.2, where the SDK builds the dict itself; on 0.1 the keys came from the server.

## Why is this bad?
pytrio 0.2.9 builds `ForwardBackwardOutput.metrics` with exactly the keys
{", ".join(f"`{k}`" for k in METRIC_KEYS)}. `metrics["loss:sum"]` raises `KeyError`, and `metrics.get("loss:sum", 0.0)` silently
logs a loss of 0.0 for the whole run.

## Fix safety
`"loss:sum"` -> `"loss_sum"` (and `"loss:mean"` -> `"loss_mean"`) is safe: the same quantity under
its 0.2 name. `"loss"` and `"train_loss"` have no fix: per token (`loss_mean`) or summed
(`loss_sum`) is the author's choice.

## References
- pytrio 0.2.9: `pytrio.types.ForwardBackwardOutput`
"""
    evidence = """
- (`029:client/adapters/training.py:73-82`)
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "def evaluate(model, batch):\n"
            "    return {'loss:sum': float(model(batch).sum())}\n"
            "def log(model, batch):\n"
            "    metrics = evaluate(model, batch)\n"
            "    print(metrics.get('loss:sum'), metrics['loss:sum'])\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "out = train.forward_backward(batch, 'cross_entropy').result()\n"
            "print(out.metrics['loss_mean'], out.metrics.get('loss_sum'))\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "trainer_metrics = trainer.evaluate()\nprint(trainer_metrics['loss'])\n"
            "print(history.metrics['loss'])\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "out = train.forward_backward(batch).result()\nprint(out.metrics['loss:sum'])\n",
            config={"target-version": "0.1"},
        ),
        Valid(
            "import pytrio as trio\n"
            "def log(trainer_state):\n"
            "    metrics = getattr(trainer_state, 'metrics', {}) or {}\n"
            "    print(metrics['loss'])\n"
            "def step(train: trio.TrainingClient, batch):\n"
            "    fb = train.forward_backward(batch, loss_fn='cross_entropy').result()\n"
            "    metrics = getattr(fb, 'metrics', {}) or {}\n"
            "    return metrics['loss_mean']\n"
        ),
        # Tinker's own key (tinker 0.38.0 `TrainingClient.forward_backward` metrics), in a marimo
        # notebook whose cells import tinker.
        Valid(
            "import marimo\n"
            "app = marimo.App()\n"
            "@app.cell\n"
            "async def _(training_client, datum):\n"
            "    import tinker\n"
            "    fb = await training_client.forward_backward([datum], loss_fn='cross_entropy')\n"
            "    print(fb.metrics['loss:sum'])\n",
            config={"sdk-modules": ["tinker"]},
        ),
        Valid(
            "import tinker\n"
            "def step(tc: tinker.TrainingClient, batch):\n"
            "    return tc.forward_backward(batch, 'cross_entropy').result().metrics['loss:sum']\n",
            config={"sdk-modules": ["tinker"]},
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "out = train.forward_backward(batch, 'cross_entropy').result()\n"
            "loss = out.metrics.get('loss:sum', 0.0)\n",
            fixed="import pytrio as trio\n"
            "out = train.forward_backward(batch, 'cross_entropy').result()\n"
            "loss = out.metrics.get('loss_sum', 0.0)\n",
            line=3,
        ),
        Invalid(
            'import pytrio as trio\nprint(result.metrics["loss:sum"])\n',
            fixed='import pytrio as trio\nprint(result.metrics["loss_sum"])\n',
        ),
        Invalid(
            "import pytrio as trio\n"
            "def step(train: trio.TrainingClient, batch):\n"
            "    out = train.forward_backward(batch).result()\n"
            "    return out.metrics['loss']\n",
            message_contains="loss_mean",
        ),
        Invalid(
            "import pytrio as trio\n"
            "def step(train: trio.TrainingClient, batch):\n"
            "    return train.forward_backward(batch).result().loss\n",
        ),
        # The metrics read defensively (`getattr(..., {}) or {}`) are still 0.2's: the guarded
        # branch never runs and the fallback logs the first value (`loss_sum`) as the loss.
        Invalid(
            "import pytrio as trio\n"
            "def step(train: trio.TrainingClient, batch):\n"
            "    fb = train.forward_backward(batch, loss_fn='cross_entropy').result()\n"
            "    metrics = getattr(fb, 'metrics', {}) or {}\n"
            "    if 'loss' in metrics:\n"
            "        return float(metrics['loss'])\n"
            "    return float(next(iter(metrics.values())))\n",
            line=6,
            message_contains="loss_mean",
        ),
        Invalid(
            "import pytrio as trio\n"
            "def train_step(train: trio.TrainingClient, batch):\n"
            "    return train.forward_backward(batch, 'cross_entropy').result().metrics\n"
            "def log(train: trio.TrainingClient, batch):\n"
            "    metrics = train_step(train, batch)\n"
            "    print(metrics.get('loss:sum'))\n",
            fixed="import pytrio as trio\n"
            "def train_step(train: trio.TrainingClient, batch):\n"
            "    return train.forward_backward(batch, 'cross_entropy').result().metrics\n"
            "def log(train: trio.TrainingClient, batch):\n"
            "    metrics = train_step(train, batch)\n"
            "    print(metrics.get('loss_sum'))\n",
            line=6,
        ),
    )
    reach = limited(
        *VALUE_ROUTES,
    )

    def visit_Subscript(self, node: ast.Subscript) -> None:
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            self._check(node.value, key)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "get" and node.args:
            key = node.args[0]
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                self._check(func.value, key)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr != _LOSS_ATTRIBUTE or sdk_line(self.ctx) == "0.1":
            return
        typ = self.model.type_of(node.value)
        if typ is not None and typ.kind is Kind.FORWARD_BACKWARD_OUTPUT:
            self.report(
                node,
                "`ForwardBackwardOutput` has no `.loss`: read `.metrics['loss_mean']` "
                "(or `'loss_sum'`)",
            )

    def _check(self, metrics: ast.expr, key: ast.Constant) -> None:
        if sdk_line(self.ctx) == "0.1":
            return
        text = key.value
        if text in _RENAMES:
            # A metrics dict bound elsewhere (a name, a helper's return) counts when the model
            # shows it came from a PyTRIO result.
            if (
                not (isinstance(metrics, ast.Attribute) and metrics.attr == "metrics")
                and self.model.kind_of(metrics) is not Kind.METRICS
            ):
                return
            if self.model.other_sdk_only:
                return  # "loss:sum" is Tinker's real key
            new = _RENAMES[text]
            fix = safe_fix(f"Use {new!r}", edit(key, "SimpleString", replace_string_value(new)))
            self.report(key, self.message.format(key=text, replacement=f"{new!r}"), fix=fix)
        elif text in _SUGGESTIONS:
            typ = self.model.type_of(metrics)
            if typ is not None and typ.kind is Kind.METRICS and typ.origin == "forward_backward":
                replacement = _SUGGESTIONS[text]
                self.report(key, self.message.format(key=text, replacement=replacement))
