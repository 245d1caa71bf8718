"""PTR006 removed-result-attribute: `.elapsed_time` on results (removed in 0.2)."""

from __future__ import annotations

import ast

from pytrio_facts.versions import REMOVED_RESULT_ATTRIBUTES
from trio_lint.diagnostics import Severity
from trio_lint.rules.base import Invalid, Rule, Valid
from trio_lint.semantics.receivers import Kind

_RESULTS = frozenset(
    {
        Kind.FORWARD_BACKWARD_OUTPUT,
        Kind.OPTIM_STEP_RESPONSE,
        Kind.SAMPLE_RESPONSE,
        Kind.SAVE_WEIGHTS_RESPONSE,
        Kind.SAVE_WEIGHTS_FOR_SAMPLER_RESPONSE,
    }
)


class RemovedResultAttribute(Rule):
    code = "PTR006"
    name = "removed-result-attribute"
    message = "`{kind}.{attr}` was removed in pytrio 0.2: {replacement}"
    severity = Severity.ERROR
    # Facts of PyTRIO's own SDK (not Tinker's): see the doc's References.
    pytrio_only = True
    min_sdk = "0.2"
    doc = """
## What it does
Flags `.elapsed_time` read from a forward-backward, optimizer-step, sample or save result.

## Why is this bad?
0.1.13 results carried an `elapsed_time` field; 0.2.9 removed it from all five result types, so the read raises `AttributeError`, typically in the logging line after a
training step that already ran.

## Fix safety
No fix: the timing has to be measured where the call starts.

## References
- pytrio 0.2.9: `pytrio.types.ForwardBackwardOutput`, `pytrio.types.OptimStepResponse`, `pytrio.types.SampleResponse`
- pytrio 0.1.13: `pytrio.types.ForwardBackwardOutput` (`elapsed_time`)
"""
    evidence = """
- api-diff.md §3.3 (removed); TRIO005
"""
    VALID = (
        Valid(
            "import pytrio as trio\nimport time\n"
            "start = time.perf_counter()\nout = train.forward_backward(batch).result()\n"
            "print(time.perf_counter() - start)\n"
        ),
        Valid("import pytrio as trio\nprint(trainer_output.elapsed_time)\n"),
        Valid(
            "import pytrio as trio\n"
            "out = train.forward_backward(batch).result()\nprint(out.elapsed_time)\n",
            config={"target-version": "0.1"},
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "out = train.forward_backward(batch).result()\nprint(out.elapsed_time)\n",
            line=3,
        ),
        Invalid(
            "import pytrio as trio\n"
            "def sample(sampler: trio.SamplingClient, p, sp):\n"
            "    resp = sampler.sample(p, sampling_params=sp).result()\n"
            "    return resp.elapsed_time\n",
        ),
        Invalid(
            "import pytrio as trio\n"
            "def step(train: trio.TrainingClient, adam):\n"
            "    return train.optim_step(adam).result().elapsed_time\n",
        ),
    )

    def visit_Attribute(self, node: ast.Attribute) -> None:
        replacement = REMOVED_RESULT_ATTRIBUTES.get(node.attr)
        if replacement is None:
            return
        typ = self.model.type_of(node.value)
        if typ is not None and typ.kind in _RESULTS:
            self.report(
                node,
                self.message.format(kind=typ.kind, attr=node.attr, replacement=replacement),
            )
