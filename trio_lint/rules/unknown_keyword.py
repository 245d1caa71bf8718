"""PTR212 unknown-keyword: a keyword that no pytrio release of the function or method accepts."""

from __future__ import annotations

import ast
import difflib

from trio_lint.output.diagnostics import Severity
from trio_lint.rules.base import Invalid, Valid, limited
from trio_lint.rules.checkers import conformance


class UnknownKeyword(conformance.ConformanceRule):
    code = "PTR212"
    name = "unknown-keyword"
    message = "{what}: {consequence}{hint}"
    severity = Severity.ERROR
    # Facts of PyTRIO's own SDK (not Tinker's): see the doc's References.
    pytrio_only = True
    doc = """
## What it does
Flags a keyword argument of a pytrio function or client method (`trio.configure`,
`svc.create_lora_training_client`, `train.forward_backward`, `sampler.sample`, ...) that no
released pytrio accepts, with the parameters the target release (`target-version`, by default the
installed pytrio) does take. Keywords of an older or newer release are PTR004's and PTR007's;
fields of types (`SamplingParams(...)`) are PTR203's.

## Why is this bad?
A function raises `TypeError` for a keyword it does not take. pytrio 0.2.9's `configure` is worse:
it collects unknown options in `**unknown_options` and only emits a `UserWarning`, so a misspelt
option (`request_timeout=600`) silently leaves the default in place.

## Fix safety
No fix: which parameter was meant is not known.

## References
- pytrio 0.2.9: `pytrio.configure` (`**unknown_options`)
- pytrio 0.2.9: `pytrio.ServiceClient.create_lora_training_client`, `pytrio.SamplingClient.sample`
"""
    evidence = """
- generated: `pytrio_facts/api_versions.json` (every release's signatures)
"""
    VALID = (
        Valid(
            "import pytrio as trio\ntrio.configure(request_timeout_seconds=600, log_level='INFO')\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "svc = trio.ServiceClient()\n"
            "train = svc.create_lora_training_client(base_model='m', rank=16, train_unembed=False)\n"
        ),
        Valid("import pytrio as trio\nimport torch\nmodel.forward(x, use_cache=False)\n"),
        Valid("import pytrio as trio\ntrio.configure(**settings)\n"),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\ntrio.configure(request_timeout=600)\n",
            line=2,
            message_contains="UserWarning",
        ),
        Invalid(
            "import pytrio as trio\n"
            "svc = trio.ServiceClient()\n"
            "train = svc.create_lora_training_client(base_model='m', lora_alpha=32)\n",
            message_contains="TypeError",
        ),
        Invalid(
            "import pytrio as trio\n"
            "def sample(sampler: trio.SamplingClient, prompt, params):\n"
            "    return sampler.sample(prompt, sampling_params=params, n=4).result()\n",
            message_contains="num_samples",
        ),
    )
    reach = limited(
        "call-site-method-parameter",
    )

    @classmethod
    def report_issue(
        cls, checker: conformance.ConformanceChecker, issue: conformance.Issue, node: ast.AST
    ) -> None:
        checker.report(
            issue.node,
            cls.message.format(
                what=conformance.describe(issue),
                consequence=conformance.consequence(issue),
                hint=_parameters(issue),
            ),
            code=cls.code,
        )


def _parameters(issue: conformance.Issue) -> str:
    """The closest keyword the target release takes, else all of them when there are few."""
    found = conformance.callee_function(issue)
    if found is None or not found.keywords:
        return ""
    names = [p.name for p in found.params if p.name in found.keywords]
    close = difflib.get_close_matches(issue.name, names, n=1, cutoff=0.6)
    if close:
        return f"; did you mean `{close[0]}`?"
    if len(names) <= 8:
        return f"; it takes {', '.join(f'`{n}`' for n in names)}"
    return ""
