"""PTR308 wrong-metric-key: reading a loss metric under a key the SDK never produces."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from pytrio_facts.sdk import METRIC_KEYS, WRONG_METRIC_KEYS
from trio_lint.output.diagnostics import Applicability, Severity
from trio_lint.rules._common import replace_string_value, sdk_line
from trio_lint.rules.base import Invalid, LooksAt, Rule, SdkValues, Valid, edit, limited, safe_fix
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
_KEYS = frozenset(_RENAMES) | frozenset(_SUGGESTIONS)


class WrongMetricKey(Rule):
    code = "PTR308"
    supersedes = frozenset({f"pytrio.types.ForwardBackwardOutput.{_LOSS_ATTRIBUTE}"})
    looks_at = LooksAt(
        calls=frozenset({"get"}),
        attributes=frozenset({_LOSS_ATTRIBUTE}),
        receivers=SdkValues(
            symbols=False, kinds=frozenset({Kind.METRICS, Kind.FORWARD_BACKWARD_OUTPUT})
        ),
    )
    # `x.loss` and `x[key]` on a plain name only when the model types `x` as a result or its
    # metrics (the key may be bound elsewhere: `metrics[KEY]`, so every key is looked at).
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
        # An object of the user's own class keeping a dict named `metrics`.
        Valid(
            "import pytrio as trio\n"
            "class Tracker:\n"
            "    def __init__(self):\n"
            "        self.metrics = {'loss:sum': 0.0}\n"
            "    def total(self):\n"
            "        return self.metrics['loss:sum']\n"
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
        # A key bound elsewhere is reported where it is read (without a fix: the constant may
        # serve other reads).
        Invalid(
            "import pytrio as trio\n"
            "LOSS_KEY = 'loss:sum'\n"
            "def step(train: trio.TrainingClient, batch):\n"
            "    out = train.forward_backward(batch, 'cross_entropy').result()\n"
            "    return out.metrics[LOSS_KEY]\n",
            line=5,
        ),
        # A metrics dict handed to a logging method whose parameter is annotated `dict`.
        Invalid(
            "import pytrio as trio\n"
            "class Logger:\n"
            "    def log(self, metrics: dict[str, float]) -> float:\n"
            "        return metrics['loss:sum']\n"
            "def step(train: trio.TrainingClient, batch, logger: Logger):\n"
            "    fb = train.forward_backward(batch, 'cross_entropy').result()\n"
            "    return logger.log(fb.metrics)\n",
            fixed="import pytrio as trio\n"
            "class Logger:\n"
            "    def log(self, metrics: dict[str, float]) -> float:\n"
            "        return metrics['loss_sum']\n"
            "def step(train: trio.TrainingClient, batch, logger: Logger):\n"
            "    fb = train.forward_backward(batch, 'cross_entropy').result()\n"
            "    return logger.log(fb.metrics)\n",
            line=4,
        ),
    )
    reach = limited(
        "dict-entry-get",
        "queue-worker",
    )

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self._check_read(node.value, node.slice)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "get" and node.args:
            self._check_read(func.value, node.args[0])

    def _check_read(self, metrics: ast.expr, key: ast.expr) -> None:
        """`metrics[key]` / `metrics.get(key)`: a key written there, or bound elsewhere (a name, a
        constant, a setting) to a string the model can read."""
        if key.__class__ is ast.Constant:
            if key.value.__class__ is str and key.value in _KEYS:
                self._check(metrics, key, key)
            return
        if not isinstance(key, (ast.Name, ast.Attribute, ast.Subscript)):
            return
        # The receiver first (cheap): most reads with a computed key are not of metrics.
        if not self._metrics_like(metrics):
            return
        value = self.model.literal(key)
        if (
            isinstance(value, ast.Constant)
            and isinstance(value.value, str)
            and value.value in _KEYS
        ):
            self._check(metrics, value, key)

    def _metrics_like(self, metrics: ast.expr) -> bool:
        return self._any_metrics(metrics) or self.model.kind_of(metrics) is Kind.METRICS

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

    @staticmethod
    def _any_metrics(metrics: ast.expr) -> bool:
        """`<x>.metrics`, where `x` is not `self`/`cls`: an object of the user's own class that
        keeps a dict named `metrics` is not a PyTRIO result (the model types `self.metrics` when
        it holds one)."""
        return (
            isinstance(metrics, ast.Attribute)
            and metrics.attr == "metrics"
            and not (isinstance(metrics.value, ast.Name) and metrics.value.id in ("self", "cls"))
        )

    def _check(self, metrics: ast.expr, key: ast.Constant, at: ast.expr) -> None:
        """Report the read of `metrics` under the string `key`, at `at` (the key as written:
        the constant itself gets the fix; a key bound elsewhere is reported where it is used)."""
        if sdk_line(self.ctx) == "0.1":
            return
        text = key.value
        if text in _RENAMES:
            # A metrics dict bound elsewhere (a name, a helper's return) counts when the model
            # shows it came from a PyTRIO result.
            if not self._any_metrics(metrics) and self.model.kind_of(metrics) is not Kind.METRICS:
                return
            if self.model.other_sdk_only:
                return  # "loss:sum" is Tinker's real key
            new = _RENAMES[text]
            fix = (
                safe_fix(f"Use {new!r}", edit(key, "SimpleString", replace_string_value(new)))
                if at is key
                else None
            )
            self.report(at, self.message.format(key=text, replacement=f"{new!r}"), fix=fix)
        elif text in _SUGGESTIONS:
            typ = self.model.type_of(metrics)
            if typ is not None and typ.kind is Kind.METRICS and typ.origin == "forward_backward":
                replacement = _SUGGESTIONS[text]
                self.report(at, self.message.format(key=text, replacement=replacement))
