"""PTR213 unknown-attribute: a method, attribute or name that no pytrio release has."""

from __future__ import annotations

import ast
import difflib

from trio_lint.diagnostics import Severity
from trio_lint.rules import _conformance as conformance
from trio_lint.rules.base import Invalid, Valid


class UnknownAttribute(conformance.ConformanceNameRule):
    code = "PTR213"
    name = "unknown-attribute"
    message = "{what}: {consequence}{hint}"
    severity = Severity.ERROR
    # Facts of PyTRIO's own SDK (not Tinker's): see the doc's References.
    pytrio_only = True
    doc = """
## What it does
Flags a method called on a PyTRIO client or future, a field read from a PyTRIO result or type, or
a name taken from the `pytrio` or `pytrio.types` module that no released pytrio has. Only
expressions known to hold a PyTRIO object are checked (SDK names, clients made by the SDK,
parameters annotated with SDK types, results of `.result()`). Names of an older or newer release
are PTR003's, PTR006's and PTR007's.

## Why is this bad?
It raises `AttributeError` (an import, `ImportError`) at run time, often after the slow part of a
training script already ran. Such names usually come from other SDKs (`generate`, `train_step`,
`loss`) or from guessing.

## Fix safety
No fix: the closest existing name is suggested, but whether it was meant is not known.

## References
- pytrio 0.2.9: `pytrio.TrainingClient`, `pytrio.SamplingClient`, `pytrio.types.ForwardBackwardOutput`
"""
    evidence = """
- generated: pytrio_facts/api_versions.json (every release's public API)
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "def step(train: trio.TrainingClient, batch):\n"
            "    return train.forward_backward(batch, 'cross_entropy').result().metrics\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "def dump(out: trio.types.ForwardBackwardOutput):\n"
            "    return out.model_dump_json()\n"
        ),
        Valid("import pytrio as trio\nimport torch\nmodel.generate(ids).loss\n"),
        Valid(
            "import pytrio as trio\n"
            "svc = trio.ServiceClient()\n"
            "print(svc.username, svc.workspace_name)\n"
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "def step(train: trio.TrainingClient, batch):\n"
            "    return train.train_step(batch).result()\n",
            line=3,
            message_contains="no pytrio release has this method",
        ),
        Invalid(
            "import pytrio as trio\n"
            "def generate(sampler: trio.SamplingClient, prompt, params):\n"
            "    return sampler.sample(prompt, sampling_params=params).result().text\n",
            message_contains="sequences",
        ),
        Invalid(
            "import pytrio as trio\nparams = trio.GenerationConfig(max_tokens=8)\n",
        ),
        Invalid("from pytrio.types import SampleOutput\n", message_contains="SampleSequence"),
    )

    def report_issue(self, issue: conformance.Issue, node: ast.AST) -> None:
        names = conformance.member_names(issue)
        close = difflib.get_close_matches(issue.name, names, n=1, cutoff=0.5)
        fields = [n for n in names if n in ("metrics", "sequences")]
        hint = ""
        if fields:  # results hold their data under these two
            hint = f"; it has {', '.join(f'`{n}`' for n in fields)}"
        elif close:
            hint = f"; did you mean `{close[0]}`?"
        self.report(
            issue.node,
            self.message.format(
                what=conformance.describe(issue),
                consequence=conformance.consequence(issue),
                hint=hint,
            ),
        )
