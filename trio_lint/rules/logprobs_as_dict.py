"""PTR309 logprobs-as-dict: a `compute_logprobs` result read like 0.1's dict (it is a list on 0.2)."""

from __future__ import annotations

import ast

from trio_lint.output.diagnostics import Severity
from trio_lint.rules.base import STRING_KEYS, Invalid, LooksAt, Rule, Valid
from trio_lint.semantics.receivers import Kind

# What 0.1-era code reads from the dict `compute_logprobs` returned there.
_DICT_METHODS = frozenset({"get", "keys", "items", "values"})
_DICT_ATTRIBUTES = frozenset({"logprobs", "prompt_logprobs"})
_DICT_NAMES = _DICT_METHODS | _DICT_ATTRIBUTES


class LogprobsAsDict(Rule):
    code = "PTR309"
    name = "logprobs-as-dict"
    message = (
        "`compute_logprobs` gives a list of per-token logprobs on pytrio 0.2 "
        "(`list[float | None]`), not a dict: {what}"
    )
    severity = Severity.ERROR
    min_sdk = "0.2"
    looks_at = LooksAt(attributes=_DICT_NAMES, keys=STRING_KEYS)
    doc = """
## What it does
On 0.2: flags a `compute_logprobs(...)` result (`.result()` of the sync call, or
`await sampler.compute_logprobs_async(...)`, also through a name) read like a dict: a string
key (`lp["logprobs"]`), `.get(...)`, `.keys()`, `.items()`, `.values()`, or the attribute
`.logprobs` / `.prompt_logprobs`.

## Why is this bad?
pytrio 0.1.13 returned a dict from `compute_logprobs`; from 0.2.0 on it returns a list with one
logprob per prompt token (`None` where the server gave none). A string key raises `TypeError`
(list indices must be integers), and the dict methods and attributes raise `AttributeError`,
after the request was already paid for.

## Fix safety
No fix: what the code wanted from the dict has to be re-read from the list.

## References
- pytrio 0.2.9: `pytrio.SamplingClient.compute_logprobs`, `pytrio.SamplingClient.compute_logprobs_async`
- pytrio 0.1.13: `pytrio.SamplingClient.compute_logprobs` (returned a dict)
"""
    evidence = """
- `compute_logprobs(...) -> APIFuture[list[float | None]]` and
  `compute_logprobs_async(...) -> list[float | None]` from 0.2.0 (`020:client/sampling.py:139`,
  `020:client/sampling.py:150-152`) to 0.2.9 (`029:client/sampling.py:204,219`); 0.1.13 returns
  `APIFuture[dict[str, Any]]` from both (`013:lib/sampling_client.py:128,144-146`).
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "def score(sampler: trio.SamplingClient, prompt):\n"
            "    logprobs = sampler.compute_logprobs(prompt).result()\n"
            "    return sum(lp for lp in logprobs[1:] if lp is not None)\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "async def score(sampler: trio.SamplingClient, prompt):\n"
            "    logprobs = await sampler.compute_logprobs_async(prompt)\n"
            "    return logprobs[-1], len(logprobs)\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "def score(sampler: trio.SamplingClient, prompt):\n"
            "    out = sampler.compute_logprobs(prompt).result()\n"
            "    return out['logprobs']\n",
            config={"target-version": "0.1"},
        ),
        Valid(
            "import pytrio as trio\n"
            "def read(sampler: trio.SamplingClient, p, sp):\n"
            "    seq = sampler.sample(p, sampling_params=sp).result().sequences[0]\n"
            "    return seq.logprobs, {'logprobs': 1}.get('logprobs')\n"
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "def score(sampler: trio.SamplingClient, prompt):\n"
            "    logprobs = sampler.compute_logprobs(prompt).result()\n"
            "    return sum(lp for lp in logprobs['logprobs'][1:] if lp is not None)\n",
            line=4,
            message_contains="string key",
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def score(sampler: trio.SamplingClient, prompt):\n"
            "    out = await sampler.compute_logprobs_async(prompt)\n"
            "    return out.get('prompt_logprobs', [])\n",
            line=4,
        ),
        Invalid(
            "import pytrio as trio\n"
            "svc = trio.ServiceClient()\n"
            "sampler = svc.create_sampling_client(base_model='Qwen/Qwen3-8B')\n"
            "print(sampler.compute_logprobs(prompt).result().prompt_logprobs)\n",
            line=4,
        ),
    )

    def _is_logprobs(self, expr: ast.expr) -> bool:
        typ = self.model.type_of(expr)
        return typ is not None and typ.kind is Kind.LOGPROBS

    def visit_Subscript(self, node: ast.Subscript) -> None:
        key = node.slice
        if (
            isinstance(key, ast.Constant)
            and isinstance(key.value, str)
            and self._is_logprobs(node.value)
        ):
            self.report(
                node,
                self.message.format(what=f"a string key (`[{key.value!r}]`) raises `TypeError`"),
            )

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr not in _DICT_NAMES or not self._is_logprobs(node.value):
            return
        kind = "method" if node.attr in _DICT_METHODS else "attribute"
        self.report(
            node,
            self.message.format(
                what=f"a list has no {kind} `.{node.attr}` (`AttributeError`); index it by position"
            ),
        )
