"""PTR101 missing-result: reading a result field from a future (`fb.metrics` without `.result()`)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from trio_lint.diagnostics import Applicability, Severity
from trio_lint.rules.base import Invalid, Rule, Valid, edit, safe_fix

if TYPE_CHECKING:
    import libcst as cst

# Methods whose sync form returns a future (TrainingClient, SamplingClient, RestClient on 0.2).
# Only a cheap pre-check: the receiver model decides whether the call really returns a future.
_FUTURE_METHODS = frozenset(
    {
        "forward",
        "forward_backward",
        "forward_backward_custom",
        "optim_step",
        "save_state",
        "save_weights_for_sampler",
        "load_state",
        "load_state_with_optimizer",
        "sample",
        "compute_logprobs",
        "get_training_run",
        "list_training_runs",
        "list_checkpoints",
        "list_user_checkpoints",
        "get_checkpoint_archive_url",
        "get_checkpoint_download_url",
        "download_checkpoint",
        "get_session",
        "list_sessions",
        "get_sampler",
    }
)
# What may legitimately be done with a future (APIFuture and concurrent.futures.Future).
_FUTURE_API = frozenset(
    {"result", "done", "exception", "cancel", "cancelled", "running", "map", "add_done_callback"}
)


# Builtins that consume an iterable: a future given to one of them is not its result.
_CONSUMERS = frozenset({"sum", "len", "list", "tuple", "sorted", "max", "min", "enumerate", "zip"})


def _is_reference(expr: ast.expr) -> bool:
    """A name or `self.x`: a value bound elsewhere (the model says what it holds)."""
    return isinstance(expr, ast.Name) or (
        isinstance(expr, ast.Attribute)
        and isinstance(expr.value, ast.Name)
        and expr.value.id == "self"
    )


def _await_again(node: cst.CSTNode) -> cst.CSTNode:
    """`(await x.m_async(...))` -> `(await (await x.m_async(...)))`: the second await waits."""
    import libcst as cst

    assert isinstance(node, cst.Await)
    inner = node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.Await(expression=inner, lpar=node.lpar, rpar=node.rpar)


def _append_result(node: cst.CSTNode) -> cst.CSTNode:
    import libcst as cst

    return cst.Call(func=cst.Attribute(value=node, attr=cst.Name("result")))  # type: ignore[arg-type]


class MissingResult(Rule):
    code = "PTR101"
    name = "missing-result"
    call_methods = _CONSUMERS
    message = (
        "`{method}(...)` returns a future: call `.result()` (or `await` it) before reading {use}"
    )
    severity = Severity.ERROR
    fix_safety = Applicability.SAFE
    doc = """
## What it does
Flags a result field read from the future that a PyTRIO call returns:
`tc.forward_backward(...).metrics`,
`sc.sample(...).sequences`, or a name bound to such a call and read (`fb.metrics`, `resp[0]`) before
`.result()` or `await`.

## Why is this bad?
`forward_backward`, `optim_step`, `save_state`, `save_weights_for_sampler`, `sample` and
`compute_logprobs` (and the RestClient methods on 0.2) return an `APIFuture` /
`concurrent.futures.Future`
right after submitting the request. The future has no `metrics`, `sequences` or `path`: the line
raises
`AttributeError` after the request was already sent, wasting a training step.

## Fix safety
Safe when the attribute is read directly on the call: inserting `.result()` blocks exactly where the
value was needed anyway. No fix for a name bound to the future (where to wait is the author's
choice:
submitting the next request first is usually faster).

## References
- pytrio 0.2.9: `pytrio.TrainingClient.forward_backward`, `pytrio.SamplingClient.sample`, `pytrio.types.APIFuture`
"""
    evidence = """
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "def step(tc: trio.TrainingClient, batches):\n"
            "    futs = [tc.forward_backward(b, 'cross_entropy') for b in batches]\n"
            "    total = sum(f.result().metrics['loss_sum'] for f in futs)\n"
            "    for fut in futs:\n        fut.result()\n"
            "    return total, len(futs)\n"
        ),
        Valid(
            "import pytrio as trio\nimport torch\n"
            "class Trainer:\n"
            "    def __init__(self, tc: trio.TrainingClient, model):\n"
            "        self.tc = tc\n        self.model = model\n"
            "    def submit(self, batch):\n"
            "        self.pending = self.tc.forward_backward(batch, 'cross_entropy').result()\n"
            "        self.local = self.model.forward(torch.zeros(2))\n"
            "    def loss(self):\n"
            "        return self.pending.metrics['loss_sum'], sum(self.local), self.local[0]\n"
        ),
        Valid(
            "import pytrio as trio\nfb = tc.forward_backward(batch, 'cross_entropy')\n"
            "opt = tc.optim_step(trio.AdamParams())\nprint(fb.result().metrics)\n"
        ),
        Valid("import pytrio\nout = model.forward(x).logits\n"),
        Valid("import pytrio\nfuture = tc.optim_step(params)\nfuture.add_done_callback(print)\n"),
        Valid(
            "import pytrio\nfrom accelerate import Accelerator\n"
            "accelerator = Accelerator()\nout = accelerator.save_state('ckpt')\nprint(out.upper())\n"
        ),
        Valid(
            "import pytrio as trio\nasync def f(tc):\n"
            "    fb = await tc.forward_backward_async(batch)\n    return (await fb).metrics\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "async def gen(sc: trio.SamplingClient, p, sp):\n"
            "    resp = await sc.sample_async(p, sampling_params=sp)\n"
            "    return resp.sequences[0].text\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "def latest(run_id: str):\n"
            "    rest = trio.ServiceClient().create_rest_client()\n"
            "    checkpoints = rest.list_checkpoints(run_id).result().checkpoints\n"
            "    for c in checkpoints:\n        print(c.path)\n"
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\nloss = tc.forward_backward(batch, 'cross_entropy').metrics['loss_sum']\n",
            fixed="import pytrio as trio\n"
            "loss = tc.forward_backward(batch, 'cross_entropy').result().metrics['loss_sum']\n",
            line=2,
            column=8,
        ),
        Invalid(
            "import pytrio as trio\nsvc = trio.ServiceClient()\n"
            "sc = svc.create_sampling_client(base_model='m')\n"
            "text = sc.sample(prompt, sampling_params=p).sequences[0].text\n",
            fixed="import pytrio as trio\nsvc = trio.ServiceClient()\n"
            "sc = svc.create_sampling_client(base_model='m')\n"
            "text = sc.sample(prompt, sampling_params=p).result().sequences[0].text\n",
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def step(tc: trio.TrainingClient, batch):\n"
            "    return (await tc.forward_backward_async(batch)).metrics['loss_mean']\n",
            fixed="import pytrio as trio\n"
            "async def step(tc: trio.TrainingClient, batch):\n"
            "    return (await (await tc.forward_backward_async(batch))).metrics['loss_mean']\n",
            message_contains="first await only enqueues",
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def step(tc: trio.TrainingClient, batch):\n"
            "    fb = await tc.forward_backward_async(batch)\n"
            "    return fb.metrics['loss_mean']\n",
            fixed=None,
            line=4,
        ),
        Invalid(
            "import pytrio as trio\nfb = tc.forward_backward(batch)\nprint(fb.metrics)\n",
            fixed=None,
            line=3,
            message_contains="`fb`",
        ),
        Invalid(
            "import pytrio as trio\n"
            "def save(tc: trio.TrainingClient):\n"
            "    ckpt = tc.save_state('step-10')\n"
            "    print(ckpt.path)\n",
            fixed=None,
        ),
        Invalid(
            "import pytrio as trio\n"
            "def step(tc: trio.TrainingClient, batches):\n"
            "    futs = tc.forward_backward(batches[0], 'cross_entropy')\n"
            "    return sum(futs)\n",
            line=4,
            message_contains="`futs` holds a future",
        ),
        Invalid(
            "import pytrio as trio\n"
            "def show(sc: trio.SamplingClient, prompt, params):\n"
            "    resp = sc.sample(prompt, num_samples=4, sampling_params=params)\n"
            "    for seq in resp:\n        print(seq)\n",
            line=4,
        ),
        Invalid(
            "import pytrio as trio\n"
            "class Trainer:\n"
            "    def __init__(self, tc: trio.TrainingClient):\n        self.tc = tc\n"
            "    def submit(self, batch):\n"
            "        self.pending = self.tc.forward_backward(batch, 'cross_entropy')\n"
            "    def loss(self):\n        return self.pending.metrics['loss_sum']\n",
            line=8,
            message_contains="`self.pending` holds a future",
        ),
        Invalid(
            # The loop below reads `checkpoints`: its items are typed only when a rule asks,
            # after `trio` (a module name read in a function) is resolved.
            "import pytrio as trio\n"
            "def latest(run_id: str):\n"
            "    service = trio.ServiceClient()\n"
            "    rest = service.create_rest_client()\n"
            "    checkpoints = rest.list_checkpoints(run_id).checkpoints\n"
            "    for c in checkpoints:\n        print(c.path)\n",
            fixed="import pytrio as trio\n"
            "def latest(run_id: str):\n"
            "    service = trio.ServiceClient()\n"
            "    rest = service.create_rest_client()\n"
            "    checkpoints = rest.list_checkpoints(run_id).result().checkpoints\n"
            "    for c in checkpoints:\n        print(c.path)\n",
            line=5,
        ),
    )

    def visit_For(self, node: ast.For) -> None:
        self._check(node.iter, node.iter, "its items (iterating)")

    def visit_comprehension(self, node: ast.comprehension) -> None:
        self._check(node.iter, node.iter, "its items (iterating)")

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if (
            isinstance(func, ast.Name)
            and func.id in _CONSUMERS
            and len(node.args) == 1
            and self.model.bound_expression(func) is None
            and self.model.qualified_name(func) is None
        ):
            self._check(node.args[0], node.args[0], f"its items (`{func.id}(...)`)")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr not in _FUTURE_API:
            self._check(node, node.value, f"`.{node.attr}`")

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self._check(node, node.value, "an item")

    def _check(self, node: ast.expr, value: ast.expr, use: str) -> None:
        if isinstance(value, ast.Await) and isinstance(value.value, ast.Call):
            # One await of a two-await method gives the future, not the result.
            func = value.value.func
            if isinstance(func, ast.Attribute) and self._is_future(value):
                fix = safe_fix("Await the future too", edit(value, "Await", _await_again))
                self.report(
                    node,
                    f"`await {func.attr}(...)` gives a future (the first await only enqueues): "
                    f"await it again before reading {use}",
                    fix=fix,
                )
            return
        if isinstance(value, ast.Call):
            func = value.func
            if not (isinstance(func, ast.Attribute) and func.attr in _FUTURE_METHODS):
                return
            if not self._is_future(value):
                return
            fix = safe_fix("Insert `.result()`", edit(value, "Call", _append_result))
            self.report(node, self.message.format(method=func.attr, use=use), fix=fix)
        elif _is_reference(value) and self._is_future(value):
            name = ast.unparse(value)
            self.report(
                node,
                f"`{name}` holds a future: call `{name}.result()` (or `await {name}`)"
                f" before reading {use}",
            )

    def _is_future(self, expr: ast.expr) -> bool:
        typ = self.model.type_of(expr)
        return typ is not None and typ.is_future
