"""PTR006 removed-result-attribute: a field of a pytrio result or type that the target release
removed (`.elapsed_time` on 0.2)."""

from __future__ import annotations

import ast

from pytrio_facts.versions import REMOVED_RESULT_ATTRIBUTES
from trio_lint.output.diagnostics import Severity
from trio_lint.rules.base import Invalid, Valid, limited
from trio_lint.rules.checkers import conformance


class RemovedResultAttribute(conformance.ConformanceRule):
    code = "PTR006"
    name = "removed-result-attribute"
    message = "{what}: {consequence}{advice}"
    severity = Severity.ERROR
    # Facts of PyTRIO's own SDK (not Tinker's): see the doc's References.
    pytrio_only = True
    doc = """
## What it does
Flags a field read from a pytrio result or type (a forward-backward, optimizer-step, sample or
save result, a checkpoint, ...) that an earlier release had and the target release
(`target-version`, by default the installed pytrio) removed or renamed, and names the release:
`.elapsed_time` (gone from every result in 0.2.0), `Checkpoint.tinker_path` (renamed to `path` in
0.2.5), and every later change.

## Why is this bad?
The read raises `AttributeError`, typically in the logging line after a training step that
already ran.

## Fix safety
No fix: the timing has to be measured where the call starts, and a renamed field may hold a
different shape.

## References
- pytrio 0.2.9: `pytrio.types.ForwardBackwardOutput`, `pytrio.types.OptimStepResponse`, `pytrio.types.SampleResponse`
- pytrio 0.1.13: `pytrio.types.ForwardBackwardOutput` (`elapsed_time`)
"""
    evidence = """
- 0.1.13 results carry `elapsed_time`: `013:types/forward/forward_backward_output.py:14`,
  `013:types/optim_step/optim_step_response.py:8`, `013:types/sample/sample_response.py:23`,
  `013:types/checkpoint/save_weights_response.py:19`,
  `013:types/checkpoint/save_weights_for_sampler_response.py:19`.
- 0.2.0 results have no such field (`020:types/forward/forward_backward_output.py:5-13`,
  `020:types/optim_step/optim_step_response.py:4-6`, `020:types/sample/sample_response.py:9-23`);
  nor have 0.2.9's (`029:types/forward/forward_backward_output.py:9-25`,
  `029:types/optim_step/optim_step_response.py:6-14`, `029:types/sample/sample_response.py:11-41`).
- `Checkpoint.tinker_path` on 0.2.4 (`024:types/rest.py:44`), `path` from 0.2.5
  (`025:types/rest.py:44`, `029:types/rest.py:44`).
- Removals and renames per release: generated `pytrio_facts/api_versions.json` (`renames`).
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
        Valid(
            "import pytrio as trio\n"
            "def paths(rest: trio.RestClient):\n"
            "    return [c.tinker_path for c in rest.list_user_checkpoints().result().checkpoints]\n",
            config={"target-version": "0.2.4"},
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
        Invalid(
            "import pytrio as trio\n"
            "def paths(rest: trio.RestClient):\n"
            "    return [c.tinker_path for c in rest.list_user_checkpoints().result().checkpoints]\n",
            message_contains="renamed to `path` in pytrio 0.2.5",
        ),
    )
    reach = limited(
        "call-site-method-parameter",
    )

    @classmethod
    def report_issue(
        cls, checker: conformance.ConformanceChecker, issue: conformance.Issue, node: ast.AST
    ) -> None:
        advice = REMOVED_RESULT_ATTRIBUTES.get(issue.name)
        if advice is None and issue.rename is not None:
            advice = f"read `.{issue.rename}`"
        checker.report(
            issue.node,
            cls.message.format(
                what=conformance.describe(issue),
                consequence=conformance.consequence(issue),
                advice=f"; {advice}" if advice else "",
            ),
            code=cls.code,
        )
