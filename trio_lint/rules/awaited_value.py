"""PTR104 awaited-value: a second `await` (or `.result()`) on what is already the value."""

from __future__ import annotations

from trio_lint.output.diagnostics import Applicability, Severity
from trio_lint.rules.base import Invalid, Rule, Valid, limited
from trio_lint.rules.checkers.futures import FuturesChecker


class AwaitedValue(Rule):
    code = "PTR104"
    # Found and reported by the futures checker, with PTR101 and PTR102.
    checker = FuturesChecker
    name = "awaited-value"
    message = "`{expr}` is already a `{kind}`, not a future: {fix}"
    severity = Severity.ERROR
    # Facts of PyTRIO's own SDK (not Tinker's): see the doc's References.
    pytrio_only = True
    min_sdk = "0.2"
    fix_safety = Applicability.SAFE
    doc = """
## What it does
On 0.2: flags a second `await` or a `.result()` on a value that one `await` already produced:
the results of `SamplingClient.sample_async`/`compute_logprobs_async`, of every RestClient and
ServiceClient `*_async` method, and of `create_sampling_client_async`. Both the inline
`await (await sampler.sample_async(...))` and `r = await ...` followed by `await r` /
`r.result()` are flagged, and so is gathering such values again: `asyncio.gather(*results)`
(or `wait`, `as_completed`) where `results` is what an earlier `await asyncio.gather(...)` of
those calls gave.

## Why is this bad?
In 0.2.9 these coroutines return the value itself (`return await response`), so the extra `await` raises
`TypeError: object SampleResponse can't be used in 'await' expression` (and a second `gather`
`TypeError: unhashable type: 'SampleResponse'`). The habit comes from the
training methods and from 0.1.13, whose `sample_async` returned an `APIFuture`; both need two awaits.

## Fix safety
Removing the extra `await`/`.result()` is safe on 0.2; the rule never runs on 0.1, where the
double await is the correct form.

## References
- pytrio 0.2.9: `pytrio.SamplingClient.sample_async`
- pytrio 0.1.13: `pytrio.SamplingClient.sample_async` (returned an `APIFuture`)
"""
    evidence = """
- (`013:lib/sampling_client.py:55-111`)
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "async def go(sampler: trio.SamplingClient, p, sp):\n"
            "    return await sampler.sample_async(prompt=p, sampling_params=sp)\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch):\n"
            "    return await (await train.forward_backward_async(batch))\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "async def go(sampler: trio.SamplingClient, p, sp):\n"
            "    return await (await sampler.sample_async(prompt=p, sampling_params=sp))\n",
            config={"target-version": "0.1"},
        ),
        Valid(
            "import pytrio as trio\nimport asyncio\n"
            "async def go(session, url):\n"
            "    resp = await session.get(url)\n"
            "    return await resp.json()\n"
        ),
        # Tinker 0.38.0's `create_lora_training_client` returns a client that is also a future.
        Valid(
            "import tinker\n"
            "async def main():\n"
            "    service = tinker.ServiceClient()\n"
            "    train = await service.create_lora_training_client(base_model='m', rank=16)\n"
            "    return await train.save_weights_and_get_sampling_client()\n",
            config={"sdk-modules": ["tinker"]},
        ),
        # The training methods' first await gives futures: gathering those again waits for them.
        Valid(
            "import asyncio\nimport pytrio as trio\n"
            "async def steps(train: trio.TrainingClient, batches):\n"
            "    futures = await asyncio.gather(\n"
            "        *[train.forward_backward_async(b, 'cross_entropy') for b in batches])\n"
            "    return await asyncio.gather(*futures)\n"
        ),
        # Tasks are awaitables: awaiting, gathering, waiting for them or asking `.result()`.
        Valid(
            "import asyncio\nimport pytrio as trio\n"
            "async def gen(sampler: trio.SamplingClient, prompts, sp):\n"
            "    tasks = [asyncio.create_task(sampler.sample_async(p, sampling_params=sp))\n"
            "             for p in prompts]\n"
            "    first = await tasks[0]\n"
            "    done, _ = await asyncio.wait(tasks)\n"
            "    rest = await asyncio.gather(*tasks)\n"
            "    return first, rest, [t.result() for t in done]\n"
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "async def go(sampler: trio.SamplingClient, p, sp):\n"
            "    return await (await sampler.sample_async(prompt=p, sampling_params=sp))\n",
            fixed="import pytrio as trio\n"
            "async def go(sampler: trio.SamplingClient, p, sp):\n"
            "    return await sampler.sample_async(prompt=p, sampling_params=sp)\n",
            line=3,
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def go(sampler: trio.SamplingClient, p, sp):\n"
            "    fut = await sampler.sample_async(prompt=p, sampling_params=sp)\n"
            "    result = await fut\n"
            "    return result.sequences[0].text\n",
            fixed="import pytrio as trio\n"
            "async def go(sampler: trio.SamplingClient, p, sp):\n"
            "    fut = await sampler.sample_async(prompt=p, sampling_params=sp)\n"
            "    result = fut\n"
            "    return result.sequences[0].text\n",
            line=4,
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def runs(rest: trio.RestClient):\n"
            "    resp = await rest.list_training_runs_async()\n"
            "    return resp.result().training_runs\n",
            fixed="import pytrio as trio\n"
            "async def runs(rest: trio.RestClient):\n"
            "    resp = await rest.list_training_runs_async()\n"
            "    return resp.training_runs\n",
        ),
        # Gathered twice: the first gather gave the responses themselves.
        Invalid(
            "import asyncio\nimport pytrio as trio\n"
            "async def sample_all(sampler: trio.SamplingClient, prompts, params):\n"
            "    results = await asyncio.gather(*[\n"
            "        sampler.sample_async(prompt=p, num_samples=1, sampling_params=params)\n"
            "        for p in prompts])\n"
            "    return await asyncio.gather(*results)\n",
            line=7,
            message_contains="earlier `await`",
            fixed=None,
        ),
    )
    reach = limited(
        "local-name",
        "call-site-parameter",
        "call-site-method-parameter",
        "config-dict",
        "loop-variable",
        "dict-entry-get",
        "annotated-parameter",
        "nested-coroutine-parameter",
        "gathered-list",
    )
