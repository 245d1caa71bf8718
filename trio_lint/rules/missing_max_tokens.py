"""PTR206 missing-max-tokens: sampling without a positive `max_tokens`."""

from __future__ import annotations

import ast
import re

from trio_lint.output.diagnostics import Severity
from trio_lint.rules._common import (
    argument,
    has_splat,
    int_literal,
    keyword,
    sdk_line,
    source_text,
)
from trio_lint.rules.base import Invalid, LooksAt, Rule, Valid, limited
from trio_lint.semantics.receivers import Kind

_SAMPLE = ("sample", "sample_async")


class MissingMaxTokens(Rule):
    code = "PTR206"
    name = "missing-max-tokens"
    looks_at = LooksAt(sdk_calls=frozenset({"SamplingParams"}), calls=frozenset(_SAMPLE))
    message = "Sampling needs `max_tokens > 0`: {detail}"
    severity = Severity.ERROR
    # Facts of PyTRIO's own SDK (not Tinker's): see the doc's References.
    pytrio_only = True
    doc = """
## What it does
On 0.2: flags `sample(...)`/`sample_async(...)` without `sampling_params`, and a
`SamplingParams(...)` without `max_tokens` (or with `max_tokens` <= 0 or `None`) that is passed to
a sample call. On 0.1: flags `SamplingParams(ignore_eos=True)` without `max_tokens`.

## Why is this bad?
pytrio 0.2.9 defaults `sampling_params` to `SamplingParams()` whose `max_tokens` is `None`, and
then raises `ValidationError` because `max_tokens` must be > 0. So leaving out `sampling_params` always fails. On 0.1,
`ignore_eos=True` without `max_tokens` raises `ValueError` at `sample()`.

## Fix safety
No fix: the right length is the author's choice.

## Known problems
A `SamplingParams` whose `max_tokens` is assigned later (`params.max_tokens = 64`) or that is
built from `**kwargs` is not reported.

## References
- pytrio 0.2.9: `pytrio.SamplingClient.sample`, `pytrio.SamplingParams`
- pytrio 0.1.13: `pytrio.SamplingParams` (`ignore_eos`)
"""
    evidence = """
- (`013:lib/sampling_client.py:96-98`)
- 0.2.9: `sampling_params` defaults to `SamplingParams()` (`029:client/sampling.py:21,59`),
  whose `max_tokens` is `None` (`029:types/sample/sampling_params.py:20`); a sample without
  `max_tokens > 0` raises ValidationError (`029:client/sampling.py:168-172`).
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "def make_params():\n"
            "    params = trio.SamplingParams(temperature=0.7)\n"
            "    params.max_tokens = 64\n"
            "    return params\n"
            "class Evaluator:\n"
            "    def __init__(self):\n        self.params = trio.SamplingParams(max_tokens=32)\n"
            "    def run(self, sampler: trio.SamplingClient, p):\n"
            "        a = sampler.sample(p, 1, self.params).result()\n"
            "        return a, sampler.sample(p, 1, make_params()).result()\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "sampler = trio.ServiceClient().create_sampling_client(base_model='m')\n"
            "params = trio.SamplingParams(max_tokens=64)\n"
            "sampler.sample(prompt=p, sampling_params=params).result()\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "params = trio.SamplingParams(temperature=0.7)\n"
            "params.max_tokens = 128\n"
            "sampler = trio.ServiceClient().create_sampling_client(base_model='m')\n"
            "sampler.sample(p, sampling_params=params)\n"
        ),
        Valid("import pytrio as trio\nimport torch\nx = dist.sample()\nmodel.sample(prompt=p)\n"),
        Valid(
            "import pytrio as trio\n"
            "def go(sampler: trio.SamplingClient, p, **kw):\n"
            "    return sampler.sample(p, **kw)\n"
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "sampler = trio.ServiceClient().create_sampling_client(base_model='m')\n"
            "out = sampler.sample(prompt=p, num_samples=4).result()\n",
            line=3,
            message_contains="sampling_params",
        ),
        Invalid(
            "import pytrio as trio\n"
            "sampler = trio.ServiceClient().create_sampling_client(base_model='m')\n"
            "params = trio.SamplingParams(temperature=0.7, top_p=0.9)\n"
            "out = sampler.sample(prompt=p, sampling_params=params).result()\n",
            line=3,
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def go(sampler: trio.SamplingClient, p):\n"
            "    sp = trio.SamplingParams(max_tokens=0)\n"
            "    return await sampler.sample_async(p, sampling_params=sp)\n",
        ),
        Invalid(
            "import pytrio as trio\n"
            "params = trio.SamplingParams(ignore_eos=True, temperature=1.0)\n",
            config={"target-version": "0.1"},
            message_contains="ignore_eos",
        ),
        Invalid(
            "import pytrio as trio\n"
            "class Evaluator:\n"
            "    def __init__(self):\n        self.params = trio.SamplingParams(temperature=0.7)\n"
            "    def run(self, sampler: trio.SamplingClient, p):\n"
            "        return sampler.sample(p, 1, self.params).result()\n",
            line=4,
            message_contains="used by `sample`",
        ),
        # Built in a config object's method, used through the instance a runner holds.
        Invalid(
            "import pytrio as trio\n"
            "class Config:\n"
            "    def sampling(self):\n"
            "        return trio.SamplingParams(temperature=0.7)\n"
            "class Runner:\n"
            "    def __init__(self, config: Config, sampler: trio.SamplingClient):\n"
            "        self.config = config\n"
            "        self.sampler = sampler\n"
            "    def run(self, prompt):\n"
            "        return self.sampler.sample(prompt, 1, self.config.sampling()).result()\n",
            line=4,
        ),
    )
    reach = limited(
        "queue-worker",
        "nested-coroutine-parameter",
        **{
            "dict-entry-get:valid": "the route reads the value with `.get()` where the example's shape needs the name itself"
        },
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._reported: set[int] = set()

    def _max_tokens_set(self, expr: ast.expr) -> bool:
        """`p.max_tokens = 64` (or `self.p.max_tokens = ...`) somewhere after `p` is built."""
        if isinstance(expr, ast.Name):
            return any(
                how == "attr" and key == "max_tokens" for how, key, _ in self.model.mutations(expr)
            )
        if isinstance(expr, ast.Attribute | ast.Subscript):
            # An attribute's or item's later assignments are not tracked: any `<same
            # text>.max_tokens = ` in the module keeps it quiet (unknown never matches).
            text = re.escape(source_text(expr)).replace("'", "[\"']")
            return re.search(rf"{text}\s*\.\s*max_tokens\s*=[^=]", self.ctx.source) is not None
        return False

    def _lacks(self, call: ast.Call) -> str | None:
        """Why this SamplingParams(...) has no usable max_tokens (None if it has one)."""
        if has_splat(call) or keyword(call, "max_new_tokens") is not None:
            return None  # PTR201 (hf-max-new-tokens) reports and fixes that one
        kw = keyword(call, "max_tokens")
        if kw is None:
            return "this `SamplingParams` has no `max_tokens`"
        given = self.model.literal(kw.value)
        value = int_literal(given)
        if value is not None and value <= 0:
            return f"`max_tokens={value}` is not positive"
        if isinstance(given, ast.Constant) and given.value is None:
            return "`max_tokens=None` is rejected"
        return None

    def visit_Call(self, node: ast.Call) -> None:
        line = sdk_line(self.ctx)
        if line == "0.1" and self.model.is_sdk(node.func, "SamplingParams"):
            eos = keyword(node, "ignore_eos")
            if (
                eos is not None
                and keyword(node, "max_tokens") is None
                and not has_splat(node)
                and isinstance(given := self.model.literal(eos.value), ast.Constant)
                and given.value is True
            ):
                self.report(
                    node,
                    self.message.format(
                        detail="`ignore_eos=True` without `max_tokens` raises at `sample()`"
                    ),
                )
            return
        if line == "0.1":
            return
        found = self.model.client_call(node, methods=_SAMPLE)
        if found is None or found[0] is not Kind.SAMPLING_CLIENT or found[1] not in _SAMPLE:
            return
        params = argument(node, 2, "sampling_params")
        if params is None:
            if not has_splat(node):
                self.report(
                    node,
                    self.message.format(
                        detail="pass `sampling_params=trio.SamplingParams(max_tokens=N)` "
                        "(the default has `max_tokens=None`)"
                    ),
                )
            return
        if isinstance(params, ast.Call) and self.model.is_sdk(params.func, "SamplingParams"):
            reason = self._lacks(params)
            if reason is not None:
                self.report(params, self.message.format(detail=reason))
        else:
            self._check_bound(params)

    def _check_bound(self, params: ast.expr) -> None:
        """`sampling_params=p` where the model shows `p` is a `SamplingParams(...)` built
        elsewhere (a name, `self.p`, `Settings.P`, a parameter's argument, a helper's return,
        followed step by step) whose `max_tokens` is never set later."""
        bound: ast.expr | None = params
        for _ in range(8):
            if self._max_tokens_set(bound):  # type: ignore[arg-type]  # None only after the loop's `break`
                return  # `p.max_tokens = 64` after construction
            bound = self.model.value_of(bound)
            if bound is None or (
                isinstance(bound, ast.Call) and self.model.is_sdk(bound.func, "SamplingParams")
            ):
                break
        if not (isinstance(bound, ast.Call) and self.model.is_sdk(bound.func, "SamplingParams")):
            return
        reason = self._lacks(bound)
        if reason is not None and id(bound) not in self._reported:
            self._reported.add(id(bound))
            self.report(bound, self.message.format(detail=f"{reason} (used by `sample`)"))
