"""PTR004 removed-keyword: keyword arguments that 0.2 removed (`ignore_eos`, `lora_path`, ...)."""

from __future__ import annotations

import ast

import libcst as cst

from pytrio_facts.versions import ONE_LINE_KEYWORDS
from trio_lint.diagnostics import Applicability, Severity
from trio_lint.rules._common import drop_keyword
from trio_lint.rules.base import Fix, Invalid, Rule, Valid, edit, safe_fix, unsafe_fix
from trio_lint.semantics.receivers import Kind

_REMOVED = {(f.owner, f.name): f for f in ONE_LINE_KEYWORDS if f.missing_on == "0.2"}
_LORA = ("create_lora_training_client", "create_lora_training_client_async")


class RemovedKeyword(Rule):
    code = "PTR004"
    name = "removed-keyword"
    message = "`{name}=` was removed in pytrio 0.2 ({owner}): {replacement}"
    severity = Severity.ERROR
    # Facts of PyTRIO's own SDK (not Tinker's): see the doc's References.
    pytrio_only = True
    min_sdk = "0.2"
    fix_safety = Applicability.SAFE
    doc = """
## What it does
Flags keyword arguments that pytrio 0.1.13 accepted and 0.2.9 rejects:
`SamplingParams(ignore_eos=...)` and `create_lora_training_client(trainable_token_indices=...,
lora_path=...)`. Part of the 0.1 -> 0.2 migration guide (`--target-version 0.2`).

## Why is this bad?
`SamplingParams` forbids unknown fields, so `ignore_eos` raises a Pydantic `ValidationError` on 0.2. The two LoRA keywords are
gone from the signature and raise `TypeError`.

## Fix safety
Removing `ignore_eos=False` is safe (stopping at EOS is 0.2's only behaviour). Removing
`ignore_eos=True` or `trainable_token_indices=` is unsafe: the code runs again but no longer
does what it asked for. `lora_path` has no fix.

## References
- pytrio 0.2.9: `pytrio.SamplingParams`, `pytrio.ServiceClient.create_lora_training_client`, `pytrio.ServiceClient.create_training_client_from_state`
- pytrio 0.1.13: `pytrio.SamplingParams` (`ignore_eos`)
"""
    evidence = """
- api-diff.md rows 12, 42; pitfalls 4-5; §3.3; TRIO004
- (`029:client/service.py:387-395`)
"""
    VALID = (
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

    def visit_Call(self, node: ast.Call) -> None:
        if self.model.is_sdk(node.func, "SamplingParams"):
            owner = "SamplingParams"
        else:
            found = self.model.client_call(node)
            if found is None or found[0] is not Kind.SERVICE_CLIENT or found[1] not in _LORA:
                return
            owner = "create_lora_training_client"
        for kw in node.keywords:
            fact = _REMOVED.get((owner, kw.arg or ""))
            if fact is None:
                continue
            fix: Fix | None = None
            if fact.name != "lora_path":
                drop = edit(node, cst.Call, drop_keyword(fact.name))
                harmless = isinstance(kw.value, ast.Constant) and kw.value.value is False
                if harmless:
                    fix = safe_fix(f"Remove `{fact.name}=False`", drop)
                else:
                    fix = unsafe_fix(f"Remove `{fact.name}=`", drop)
            self.report(
                kw,
                self.message.format(name=fact.name, owner=owner, replacement=fact.replacement),
                fix=fix,
            )
