"""PTR101 missing-result: reading a result field from a future (`fb.metrics` without `.result()`)."""

from __future__ import annotations

from trio_lint.output.diagnostics import Applicability, Severity
from trio_lint.rules.base import RESPONSE_ON_FUTURE, Invalid, Rule, Valid, limited
from trio_lint.rules.checkers.futures import FuturesChecker


class MissingResult(Rule):
    code = "PTR101"
    name = "missing-result"
    # Found and reported by the futures checker, with PTR102 and PTR104.
    checker = FuturesChecker
    # A response's member read on its future (`fb.metrics`): this code's, not the conformance
    # codes' (`APIFuture.metrics` is unknown to the future itself).
    supersedes = frozenset({RESPONSE_ON_FUTURE})
    # {future} and {wait} follow the receiver (`_futures.noun`, `_futures.wait_advice`).
    message = "`{method}(...)` returns {future}: {wait} before reading {use}"
    severity = Severity.ERROR
    fix_safety = Applicability.SAFE
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
- The sync calls return an `APIFuture` right after submitting: `forward_backward`
  (`029:client/training.py:513-519`), `optim_step` (`029:client/training.py:654`), `save_state`
  (`029:client/training.py:694-696`), `save_weights_for_sampler`
  (`029:client/training.py:756-758`), `sample` (`029:client/sampling.py:55-63`),
  `compute_logprobs` (`029:client/sampling.py:204`).
- The `_async` training calls give the `APIFuture` when awaited, so a second await waits for the
  result (`029:client/training.py:544-550`); `sample_async` awaits it itself
  (`029:client/sampling.py:92-100`, `029:client/sampling.py:128`).
- RestClient calls return `concurrent.futures.Future` (`029:client/rest.py:6`,
  `029:client/rest.py:199-211`), which is not awaitable:
  https://docs.python.org/3/library/asyncio-future.html#asyncio.wrap_future
- `APIFuture` has `result()` and `__await__`, no `result_async`
  (`029:types/future/api_future.py:42,132`); response fields such as `metrics`
  (`029:types/forward/forward_backward_output.py:21`) are not on it.
- tinker 0.38.0: `tinker.lib.public_interfaces.api_future.APIFuture.result_async` and
  `.coroutine` exist.
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
        "dict-entry-get",
        "annotated-parameter",
        "nested-coroutine-parameter",
        "queue-worker",
    )
