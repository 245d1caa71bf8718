"""PTR004 removed-keyword: a keyword the target release no longer accepts (removed or renamed)."""

from __future__ import annotations

import ast

from pytrio_facts.versions import ONE_LINE_KEYWORDS
from trio_lint.diagnostics import Applicability, Severity
from trio_lint.rules import _conformance as conformance
from trio_lint.rules._common import drop_keyword
from trio_lint.rules.base import (
    Fix,
    Invalid,
    Valid,
    edit,
    rename_keyword,
    safe_fix,
    unsafe_fix,
)

# Advice only (what to write instead); whether a keyword exists comes from the API data.
_ADVICE = {f.name: f.replacement for f in ONE_LINE_KEYWORDS if f.missing_on == "0.2"}
# Dropping these keeps the behaviour (False was the only behaviour left) or changes it (unsafe).
_DROPPABLE = ("ignore_eos", "trainable_token_indices")


class RemovedKeyword(conformance.ConformanceRule):
    code = "PTR004"
    name = "removed-keyword"
    message = "{what}: {consequence}{advice}"
    severity = Severity.ERROR
    # Facts of PyTRIO's own SDK (not Tinker's): see the doc's References.
    pytrio_only = True
    fix_safety = Applicability.SAFE
    doc = """
## What it does
Flags a keyword argument of a pytrio function, method or type that an earlier release accepted
and the target release (`target-version`, by default the installed pytrio) does not, and names
the release that removed or renamed it. Most common: `trio.configure(timeout=...,
sampling_timeout=..., ...)` written for pytrio 0.2.8, whose options 0.2.9 renamed one to one
(`request_timeout_seconds`, `sampling_timeout_seconds`, `training_event_max_in_flight`, ...);
also 0.1's `SamplingParams(ignore_eos=...)` and `create_lora_training_client(lora_path=...,
trainable_token_indices=...)`.

## Why is this bad?
pytrio 0.2.9's `configure` collects unknown options in `**unknown_options` and only warns, so a
0.2.8-era `configure(timeout=600)` runs with the default 30 s request timeout. Elsewhere a removed
keyword raises `TypeError` (functions) or `ValidationError` (types forbid unknown fields).

## Fix safety
A rename is fixed safely when the old and the new keyword carry the same description in the two
releases' docstrings (the whole `configure` 0.2.8 -> 0.2.9 list) and the new name is not already
passed. Removing `ignore_eos=False` is safe (stopping at EOS is 0.2's only behaviour); removing
`ignore_eos=True` or `trainable_token_indices=` is unsafe: the code runs again but no longer does
what it asked for. Other removals have no fix.

## References
- pytrio 0.2.9: `pytrio.configure` (`request_timeout_seconds`, `**unknown_options`)
- pytrio 0.2.8: `pytrio.configure` (`timeout`)
- pytrio 0.2.9: `pytrio.SamplingParams`, `pytrio.ServiceClient.create_lora_training_client`
- pytrio 0.1.13: `pytrio.SamplingParams` (`ignore_eos`)
"""
    evidence = """
- generated: pytrio_facts/api_versions.json (renames paired by docstring, reviewed in
  tests/pytrio_facts/test_api_versions.py)
"""
    VALID = (
        Valid("import pytrio as trio\ntrio.configure(request_timeout_seconds=600)\n"),
        Valid(
            "import pytrio as trio\ntrio.configure(timeout=600, sampling_timeout=900)\n",
            config={"target-version": "0.2.8"},
        ),
        Valid("import pytrio as trio\nsp = trio.SamplingParams(max_tokens=64, stop=['\\n'])\n"),
        Valid(
            "import pytrio as trio\nfrom transformers import GenerationConfig\n"
            "g = GenerationConfig(ignore_eos=True)\n"
        ),
        Valid(
            "import pytrio as trio\nsp = trio.SamplingParams(max_tokens=8, ignore_eos=True)\n",
            config={"target-version": "0.1"},
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\ntrio.configure(timeout=600)\n",
            fixed="import pytrio as trio\ntrio.configure(request_timeout_seconds=600)\n",
            line=2,
            message_contains="renamed to `request_timeout_seconds` in pytrio 0.2.9",
        ),
        Invalid(
            "import pytrio as trio\n"
            "trio.configure(\n    sampling_timeout=900,\n    training_max_in_flight=4,\n)\n",
            fixed="import pytrio as trio\n"
            "trio.configure(\n    sampling_timeout_seconds=900,\n"
            "    training_event_max_in_flight=4,\n)\n",
            count=2,
            message_contains="UserWarning",
        ),
        Invalid(
            "from pytrio import configure\nconfigure(heartbeat_enabled=False)\n",
            fixed="from pytrio import configure\nconfigure(actor_heartbeat_enabled=False)\n",
        ),
        Invalid(
            "import pytrio as trio\ntrio.configure(training_worker_threads=2)\n",
            fixed=None,
            message_contains="removed in pytrio 0.2.9 (last in 0.2.8)",
        ),
        Invalid(
            "import pytrio as trio\nsp = trio.SamplingParams(max_tokens=64, ignore_eos=False)\n",
            fixed="import pytrio as trio\nsp = trio.SamplingParams(max_tokens=64)\n",
            line=2,
        ),
        Invalid(
            "import pytrio as trio\nsp = trio.SamplingParams(ignore_eos=True, max_tokens=64)\n",
            fixed="import pytrio as trio\nsp = trio.SamplingParams(max_tokens=64)\n",
            unsafe=True,
        ),
        Invalid(
            "import pytrio as trio\n"
            "svc = trio.ServiceClient()\n"
            "train = svc.create_lora_training_client(base_model='m', lora_path=previous)\n",
            fixed=None,
            message_contains="create_training_client_from_state",
        ),
        Invalid(
            "import pytrio as trio\n"
            "svc = trio.ServiceClient()\n"
            "train = svc.create_lora_training_client(\n"
            "    base_model='m', trainable_token_indices=[151643, 151644]\n"
            ")\n",
            fixed="import pytrio as trio\n"
            "svc = trio.ServiceClient()\n"
            "train = svc.create_lora_training_client(\n"
            "    base_model='m'\n"
            ")\n",
            unsafe=True,
        ),
    )

    @classmethod
    def report_issue(
        cls, checker: conformance.ConformanceChecker, issue: conformance.Issue, node: ast.AST
    ) -> None:
        assert isinstance(node, ast.Call)  # keyword issues are found on calls
        given = {kw.arg for kw in node.keywords}
        fix: Fix | None = None
        advice = ""
        if issue.rename is not None:
            advice = f"; write `{issue.rename}=`"
            if issue.rename not in given:
                fix = safe_fix(
                    f"Rename to `{issue.rename}=`",
                    edit(issue.node, "Arg", rename_keyword(issue.rename)),
                )
        elif issue.name in _ADVICE:
            advice = f"; {_ADVICE[issue.name]}"
        if issue.name in _DROPPABLE:
            drop = edit(node, "Call", drop_keyword(issue.name))
            value = issue.node.value if isinstance(issue.node, ast.keyword) else None
            harmless = isinstance(value, ast.Constant) and value.value is False
            fix = (safe_fix if harmless else unsafe_fix)(f"Remove `{issue.name}=`", drop)
        checker.report(
            issue.node,
            cls.message.format(
                what=conformance.describe(issue),
                consequence=conformance.consequence(issue),
                advice=advice,
            ),
            fix=fix,
            code=cls.code,
        )
