"""PTR101 missing-result: reading a result field from a future (`fb.metrics` without `.result()`)."""

from __future__ import annotations

import ast
import functools
from typing import TYPE_CHECKING

from trio_lint.diagnostics import Applicability, Severity
from trio_lint.rules import _conformance as conformance
from trio_lint.rules import _futures as futures
from trio_lint.rules.base import Invalid, LooksAt, Rule, SdkValues, Valid, edit, limited, safe_fix
from trio_lint.semantics.receivers import FUTURE_KINDS

if TYPE_CHECKING:
    import libcst as cst

    from trio_lint.semantics.receivers import Kind


@functools.cache
def _tinker_future_api() -> frozenset[str]:
    """The members of Tinker's `APIFuture` (read from its wheel: `pytrio_facts/tinker_api.json`),
    where the code is only Tinker's: `result_async()`, `coroutine()`, `future()` (pytrio's future
    has none of them: PTR213 reports them there)."""
    from pytrio_facts.porting import tinker_data, tinker_release

    found = tinker_data().symbol("tinker.APIFuture", tinker_release())
    return frozenset(getattr(found, "methods", {})) - {"result"}


# Builtins that consume an iterable: a future given to one of them is not its result.
_CONSUMERS = frozenset({"sum", "len", "list", "tuple", "sorted", "max", "min", "enumerate", "zip"})


def _reading(use: str | None, member: ast.Attribute | None) -> str:
    """What a finding says is read: `use`, or the attribute `member` (`.metrics`)."""
    return use if use is not None or member is None else f"`.{member.attr}`"


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
    looks_at = LooksAt(calls=_CONSUMERS, receivers=SdkValues(symbols=False, kinds=FUTURE_KINDS))
    # {future} and {wait} follow the receiver (`_futures.noun`, `_futures.wait_advice`).
    message = "`{method}(...)` returns {future}: {wait} before reading {use}"
    severity = Severity.ERROR
    fix_safety = Applicability.SAFE
    _callee_ids: set[int] | None = None  # per unit, like the instance (`_callees`)
    doc = """
## What it does
Flags a result field read from the future that a PyTRIO call returns:
`tc.forward_backward(...).metrics`,
`sc.sample(...).sequences`, or a name bound to such a call and read (`fb.metrics`, `resp[0]`) before
`.result()` or `await`. The message says how to wait for that future where the read is: `.result()`,
and also `await` for an `APIFuture` read inside `async def`; a RestClient sync call's
`concurrent.futures.Future` cannot be awaited, so it gets `.result()` alone.

A method that neither the future nor its response has, such as `fut.result_async()` (pytrio's
`APIFuture` has `result()` and is awaitable), is a misnamed way of waiting, not a read of the
response: PTR213 unknown-attribute reports it alone. Tinker's `APIFuture` has `result_async()`, so
it is not flagged in Tinker code.

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
- pytrio 0.2.9: `pytrio.TrainingClient.forward_backward`, `pytrio.SamplingClient.sample`, `pytrio.types.APIFuture` (`result`, `__await__`)
- pytrio 0.2.9: `pytrio.RestClient.list_checkpoints` (returns `concurrent.futures.Future`)
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
        # A future method the SDK does not have is PTR213's finding (one mistake, one finding):
        # this code does wait for the result, under a name pytrio's `APIFuture` lacks.
        Valid(
            "import pytrio as trio\n"
            "async def step(training: trio.TrainingClient, data):\n"
            "    fut = training.forward_backward(data, 'cross_entropy')\n"
            "    return await fut.result_async()\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "async def steps(training: trio.TrainingClient, batches):\n"
            "    futs = []\n"
            "    for batch in batches:\n"
            "        futs.append(training.forward_backward(batch, 'cross_entropy'))\n"
            "    return [await f.result_async() for f in futs]\n"
        ),
        # Tinker's `APIFuture` does have `result_async()`.
        Valid(
            "import tinker\n"
            "async def step(training: tinker.TrainingClient, data):\n"
            "    fut = training.forward_backward(data, 'cross_entropy')\n"
            "    return await fut.result_async()\n",
            config={"sdk-modules": ["pytrio", "tinker"]},
        ),
        # Tinker's `APIFuture.coroutine()` (tinker 0.38.0).
        Valid(
            "import asyncio\nimport tinker\n"
            "async def score(sampler: tinker.SamplingClient, seqs):\n"
            "    return await asyncio.gather(*[sampler.compute_logprobs(s).coroutine() for s in seqs])\n",
            config={"sdk-modules": ["tinker"]},
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\nloss = tc.forward_backward(batch, 'cross_entropy').metrics['loss_sum']\n",
            fixed="import pytrio as trio\n"
            "loss = tc.forward_backward(batch, 'cross_entropy').result().metrics['loss_sum']\n",
            line=2,
            column=8,
            # Outside `async def`, `await` is a SyntaxError: it is not offered.
            message_contains="returns a future: call `.result()` before reading `.metrics`",
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
            message_contains="`fb` holds a future: call `fb.result()` (or `await fb`) before",
        ),
        Invalid(
            "import pytrio as trio\nfb = tc.forward_backward(batch)\nprint(fb.metrics)\n",
            fixed=None,
            line=3,
            message_contains="`fb` holds a future: call `fb.result()` before reading `.metrics`",
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
            # A RestClient sync call's `concurrent.futures.Future` has no `__await__`.
            message_contains="returns a `concurrent.futures.Future`: call `.result()` before",
        ),
        Invalid(
            "import pytrio as trio\n"
            "def losses(training: trio.TrainingClient, batches):\n"
            "    futs = []\n"
            "    for batch in batches:\n"
            "        futs.append(training.forward_backward(batch, 'cross_entropy'))\n"
            "    return [f.metrics['loss:sum'] for f in futs]\n",
            line=6,
            message_contains="`f` holds a future",
        ),
        Invalid(
            # A method of the response, called on the future: the missing `.result()` is the
            # mistake (PTR213 leaves this one to this rule).
            "import pytrio as trio\n"
            "def dump(training: trio.TrainingClient, data):\n"
            "    fut = training.forward_backward(data, 'cross_entropy')\n"
            "    return fut.model_dump_json()\n",
            line=4,
            message_contains="before reading `.model_dump_json`",
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def step(training: trio.TrainingClient, data):\n"
            "    return training.forward_backward(data, 'cross_entropy').metrics\n",
            fixed="import pytrio as trio\n"
            "async def step(training: trio.TrainingClient, data):\n"
            "    return training.forward_backward(data, 'cross_entropy').result().metrics\n",
            message_contains="returns a future: call `.result()` (or `await` it) before reading",
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def newest(rest: trio.RestClient, run_id: str):\n"
            "    found = rest.list_checkpoints(run_id)\n"
            "    return found.checkpoints[-1]\n",
            line=4,
            message_contains="`found` holds a `concurrent.futures.Future`: call `found.result()`"
            " (it cannot be awaited) before reading `.checkpoints`",
        ),
        # Tinker's `APIFuture` has no `.metrics` either.
        Invalid(
            "import tinker\n"
            "def step(tc: tinker.TrainingClient, batch):\n"
            "    return tc.forward_backward(batch, 'cross_entropy').metrics['loss:sum']\n",
            fixed="import tinker\n"
            "def step(tc: tinker.TrainingClient, batch):\n"
            "    return tc.forward_backward(batch, 'cross_entropy').result().metrics['loss:sum']\n",
            line=3,
            config={"sdk-modules": ["tinker"]},
        ),
    )
    reach = limited(
        "local-name",
        "class-attribute",
        "init-attribute",
        "helper-return",
        "call-site-parameter",
        "call-site-method-parameter",
        "pydantic-default",
        "argparse-default",
        "config-dict",
        "loop-variable",
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
        if node.attr not in futures.FUTURE_API:
            self._check(node, node.value, None, member=node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self._check(node, node.value, "an item")

    def _check(
        self, node: ast.expr, value: ast.expr, use: str | None, member: ast.Attribute | None = None
    ) -> None:
        """`member`: the attribute read on `value` (None for items and iteration); `use` (None:
        reading `member`) is only spelled out for a finding: most reads are of no future."""
        if isinstance(value, ast.Await) and isinstance(value.value, ast.Call):
            # One await of a two-await method gives the future, not the result.
            func = value.value.func
            if isinstance(func, ast.Attribute) and self._reads_response(value, member):
                fix = safe_fix("Await the future too", edit(value, "Await", _await_again))
                self.report(
                    node,
                    f"`await {func.attr}(...)` gives a future (the first await only enqueues): "
                    f"await it again before reading {_reading(use, member)}",
                    fix=fix,
                )
            return
        if isinstance(value, ast.Call):
            func = value.func
            if not (isinstance(func, ast.Attribute) and func.attr in futures.FUTURE_METHODS):
                return
            kind = self._future_kind(value, member)
            if kind is None:
                return
            fix = safe_fix("Insert `.result()`", edit(value, "Call", _append_result))
            message = self.message.format(
                method=func.attr,
                future=futures.noun(kind),
                wait=futures.wait_advice(kind, None, in_async=self.ctx.in_async_function),
                use=_reading(use, member),
            )
            self.report(node, message, fix=fix)
        elif futures.is_reference(value):
            kind = self._future_kind(value, member)
            if kind is None:
                return
            name = ast.unparse(value)
            wait = futures.wait_advice(kind, name, in_async=self.ctx.in_async_function)
            self.report(
                node,
                f"`{name}` holds {futures.noun(kind)}: {wait} before reading {_reading(use, member)}",
            )

    def _future_kind(self, future: ast.expr, member: ast.Attribute | None) -> Kind | None:
        """The kind of future `future` holds when `member` is read as its response's."""
        typ = self.model.type_of(future)
        if typ is None or not typ.is_future:
            return None  # most reads: tested here before `_reads_response` asks the same
        return typ.kind if self._reads_response(future, member) else None

    def _reads_response(self, future: ast.expr, member: ast.Attribute | None) -> bool:
        """`future` holds a future, and `member` (when given) is read as the response's.

        A member of the response (`fb.metrics`) is. A name that neither the future nor its
        response has is a misnamed future method when the conformance rules report it on the
        future (`fut.result_async()`: PTR213 alone names the mistake) or when another SDK's
        future has it; anything else (`runs.get(...)`, `fb.loss`) is still read as the response.
        """
        typ = self.model.type_of(future)
        if typ is None or not typ.is_future:
            return False
        if member is None:
            return True
        if conformance.response_has(typ, member.attr, conformance.target(self.ctx)):
            return True
        if self.model.other_sdk_only and member.attr in _tinker_future_api():
            return False
        called = id(member) in self._callees()
        return conformance.attribute_issue(self.ctx, member, called=called) is None

    def _callees(self) -> set[int]:
        """Ids of the attributes called in the unit (`x.m` of `x.m(...)`), found on first use:
        only a future's unknown member asks."""
        if self._callee_ids is None:
            tree = self.ctx.tree
            self._callee_ids = (
                {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
                if tree is not None
                else set()
            )
        return self._callee_ids
