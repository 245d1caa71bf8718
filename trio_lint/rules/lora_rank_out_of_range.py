"""PTR207 lora-rank-out-of-range: a LoRA rank the SDK rejects."""

from __future__ import annotations

import ast

from pytrio_facts.sdk import LIMITS
from trio_lint.output.diagnostics import Severity
from trio_lint.rules._common import argument, int_literal
from trio_lint.rules.base import Invalid, LooksAt, Rule, Valid, limited
from trio_lint.semantics.receivers import Kind

_LOW, _HIGH = LIMITS.lora_rank_min, LIMITS.lora_rank_max
_METHODS = ("create_lora_training_client", "create_lora_training_client_async")


class LoraRankOutOfRange(Rule):
    code = "PTR207"
    looks_at = LooksAt(calls=frozenset(_METHODS))
    name = "lora-rank-out-of-range"
    message = (
        f"LoRA `rank={{rank}}` is outside {_LOW}..{_HIGH}: the SDK rejects it before any request"
    )
    severity = Severity.ERROR
    # Facts of PyTRIO's own SDK (not Tinker's): see the doc's References.
    pytrio_only = True
    doc = f"""
## What it does
Flags an integer literal `rank` outside {_LOW}..{_HIGH} passed to
`create_lora_training_client(...)` (or its `_async` twin).

## Why is this bad?
Both SDK lines check the rank on the client: 0.1.13 raises `ValueError`, 0.2.9 raises `ValidationError` with code
`validation.invalid_lora_rank`.

## Fix safety
No fix: the rank is a modelling choice.

## References
- pytrio 0.2.9: `pytrio.ServiceClient.create_lora_training_client` (`rank`)
"""
    evidence = """
- (`013:lib/service_client.py:165-166`)
- (`029:client/service.py:470-474`)
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "train = trio.ServiceClient().create_lora_training_client(base_model='m', rank=32)\n"
        ),
        Valid("import pytrio as trio\nfrom peft import LoraConfig\ncfg = LoraConfig(r=128)\n"),
        Valid(
            "import pytrio as trio\n"
            "def make(svc: trio.ServiceClient, rank: int):\n"
            "    return svc.create_lora_training_client(base_model='m', rank=rank)\n"
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "train = trio.ServiceClient().create_lora_training_client(base_model='m', rank=128)\n",
            line=2,
        ),
        Invalid(
            "import pytrio as trio\n"
            "svc = trio.ServiceClient()\n"
            "train = svc.create_lora_training_client('m', 2)\n",
            message_contains="rank=2",
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def main(svc: trio.ServiceClient):\n"
            "    return await svc.create_lora_training_client_async(base_model='m', rank=256)\n",
        ),
    )
    reach = limited(
        "queue-worker",
    )

    def visit_Call(self, node: ast.Call) -> None:
        found = self.model.client_call(node, methods=_METHODS)
        if found is None or found[0] is not Kind.SERVICE_CLIENT or found[1] not in _METHODS:
            return
        rank_expr = argument(node, 1, "rank")
        rank = int_literal(self.model.literal(rank_expr))
        if rank_expr is not None and rank is not None and not _LOW <= rank <= _HIGH:
            self.report(rank_expr, self.message.format(rank=rank))
