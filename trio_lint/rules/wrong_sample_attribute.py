"""PTR211 wrong-sample-attribute: `.samples`/`.outputs` on a `SampleResponse` (it is `.sequences`)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from trio_lint.output.diagnostics import Applicability, Severity
from trio_lint.rules.base import PYTRIO, Invalid, LooksAt, Rule, Valid, edit, safe_fix
from trio_lint.semantics.receivers import Kind

if TYPE_CHECKING:
    import libcst as cst

# Spellings from the original skill text (`samples`), vLLM (`outputs`) and HF (`generations`).
_WRONG = ("samples", "outputs", "generations", "completions")


def _rename(node: cst.CSTNode) -> cst.CSTNode:
    import libcst as cst

    assert isinstance(node, cst.Attribute)
    return node.with_changes(attr=cst.Name("sequences"))


class WrongSampleAttribute(Rule):
    code = "PTR211"
    supersedes = frozenset(f"pytrio.types.SampleResponse.{name}" for name in _WRONG)
    sdks = PYTRIO  # its facts are PyTRIO's `SampleResponse` fields
    name = "wrong-sample-attribute"
    message = "`SampleResponse` has no `.{attr}`: the generated sequences are `.sequences`"
    severity = Severity.ERROR
    fix_safety = Applicability.SAFE
    looks_at = LooksAt(attributes=frozenset(_WRONG))
    doc = """
## What it does
Flags `.samples`, `.outputs`, `.generations` or `.completions` read from a sample result
(`sampler.sample(...).result()`, `await sampler.sample_async(...)` on 0.2, `task.result()` of
an asyncio task running `sample_async`: `tg.create_task(...)`, the done set of `asyncio.wait`).

## Why is this bad?
`SampleResponse` has `sequences` (a list of `SampleSequence` with `tokens`, `text`, `logprobs`,
`stop_reason`), `prompt_logprobs`, `topk_prompt_logprobs`, `input_tokens`, `output_tokens`. The vLLM (`outputs[0].text`) and `samples` spellings raise `AttributeError`.

## Fix safety
Renaming to `.sequences` is safe on a receiver known to be a `SampleResponse`.

## References
- pytrio 0.2.9: `pytrio.types.SampleResponse`, `pytrio.types.SampleSequence`
"""
    evidence = """
- (`029:types/sample/sample_response.py`, `013:types/sample/sample_sequence.py:4-15`)
"""
    VALID = (
        Valid(
            "import pytrio as trio\nfrom vllm import LLM\n"
            "class Evaluator:\n"
            "    def __init__(self, llm: LLM):\n        self.llm = llm\n"
            "    def generate(self, p, sp):\n        self.last = self.llm.generate(p, sp)\n"
            "    def texts(self):\n        return [o.outputs[0].text for o in self.last]\n"
            "def generate(llm, p):\n    return llm.generate(p)\n"
            "def first(llm, p):\n    return generate(llm, p)[0].outputs\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "def gen(sampler: trio.SamplingClient, p, sp):\n"
            "    return sampler.sample(p, sampling_params=sp).result().sequences[0].text\n"
        ),
        Valid(
            "import pytrio as trio\nfrom vllm import LLM\n"
            "outs = LLM('m').generate(prompts)\nprint(outs[0].outputs[0].text)\n"
        ),
        Valid("import pytrio as trio\nimport torch\nx = dist.sample((4,))\nprint(batch.samples)\n"),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "def gen(sampler: trio.SamplingClient, p, sp):\n"
            "    return sampler.sample(p, sampling_params=sp).result().samples[0].text\n",
            fixed="import pytrio as trio\n"
            "def gen(sampler: trio.SamplingClient, p, sp):\n"
            "    return sampler.sample(p, sampling_params=sp).result().sequences[0].text\n",
            line=3,
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def gen(sampler: trio.SamplingClient, p, sp):\n"
            "    out = await sampler.sample_async(p, sampling_params=sp)\n"
            "    return [o.text for o in out.outputs]\n",
            fixed="import pytrio as trio\n"
            "async def gen(sampler: trio.SamplingClient, p, sp):\n"
            "    out = await sampler.sample_async(p, sampling_params=sp)\n"
            "    return [o.text for o in out.sequences]\n",
        ),
        Invalid(
            "import pytrio as trio\n"
            "sampler = trio.ServiceClient().create_sampling_client(base_model='m')\n"
            "resp = sampler.sample(p, num_samples=4, sampling_params=sp).result()\n"
            "texts = [c.text for c in resp.completions]\n",
            fixed="import pytrio as trio\n"
            "sampler = trio.ServiceClient().create_sampling_client(base_model='m')\n"
            "resp = sampler.sample(p, num_samples=4, sampling_params=sp).result()\n"
            "texts = [c.text for c in resp.sequences]\n",
        ),
        Invalid(
            "import pytrio as trio\n"
            "class Evaluator:\n"
            "    def __init__(self, sampler: trio.SamplingClient):\n        self.sampler = sampler\n"
            "    def generate(self, p, sp):\n"
            "        self.last = self.sampler.sample(p, 4, sp).result()\n"
            "    def texts(self):\n        return [s.text for s in self.last.samples]\n",
            fixed="import pytrio as trio\n"
            "class Evaluator:\n"
            "    def __init__(self, sampler: trio.SamplingClient):\n        self.sampler = sampler\n"
            "    def generate(self, p, sp):\n"
            "        self.last = self.sampler.sample(p, 4, sp).result()\n"
            "    def texts(self):\n        return [s.text for s in self.last.sequences]\n",
            line=8,
        ),
        Invalid(
            "import pytrio as trio\n"
            "def generate(sampler: trio.SamplingClient, p, sp):\n"
            "    return sampler.sample(p, 4, sp).result()\n"
            "def texts(sampler: trio.SamplingClient, p, sp):\n"
            "    response = generate(sampler, p, sp)\n"
            "    return [o.text for o in response.outputs]\n",
            fixed="import pytrio as trio\n"
            "def generate(sampler: trio.SamplingClient, p, sp):\n"
            "    return sampler.sample(p, 4, sp).result()\n"
            "def texts(sampler: trio.SamplingClient, p, sp):\n"
            "    response = generate(sampler, p, sp)\n"
            "    return [o.text for o in response.sequences]\n",
            line=6,
        ),
        # The results of tasks: a TaskGroup's, and the done set of `asyncio.wait`.
        Invalid(
            "import asyncio\nimport pytrio as trio\n"
            "async def gen(sampler: trio.SamplingClient, prompts, sp):\n"
            "    async with asyncio.TaskGroup() as tg:\n"
            "        tasks = [tg.create_task(sampler.sample_async(p, sampling_params=sp))\n"
            "                 for p in prompts]\n"
            "    return [t.result().samples[0].text for t in tasks]\n",
            fixed="import asyncio\nimport pytrio as trio\n"
            "async def gen(sampler: trio.SamplingClient, prompts, sp):\n"
            "    async with asyncio.TaskGroup() as tg:\n"
            "        tasks = [tg.create_task(sampler.sample_async(p, sampling_params=sp))\n"
            "                 for p in prompts]\n"
            "    return [t.result().sequences[0].text for t in tasks]\n",
            line=7,
        ),
        Invalid(
            "import asyncio\nimport pytrio as trio\n"
            "async def gen(sampler: trio.SamplingClient, prompts, sp):\n"
            "    tasks = [asyncio.create_task(sampler.sample_async(p, sampling_params=sp))\n"
            "             for p in prompts]\n"
            "    done, pending = await asyncio.wait(tasks, timeout=60)\n"
            "    return [t.result().outputs[0].text for t in done]\n",
            fixed="import asyncio\nimport pytrio as trio\n"
            "async def gen(sampler: trio.SamplingClient, prompts, sp):\n"
            "    tasks = [asyncio.create_task(sampler.sample_async(p, sampling_params=sp))\n"
            "             for p in prompts]\n"
            "    done, pending = await asyncio.wait(tasks, timeout=60)\n"
            "    return [t.result().sequences[0].text for t in done]\n",
            line=7,
        ),
    )

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr not in _WRONG:
            return
        typ = self.model.type_of(node.value)
        if typ is not None and typ.kind is Kind.SAMPLE_RESPONSE:
            fix = safe_fix("Use `.sequences`", edit(node, "Attribute", _rename))
            self.report(node, self.message.format(attr=node.attr), fix=fix)
