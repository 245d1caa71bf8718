"""PTR210 train-unembed-default: `create_lora_training_client` relies on a default that changed."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from trio_lint.output.diagnostics import Applicability, Severity
from trio_lint.rules._common import has_splat, keyword
from trio_lint.rules.base import Invalid, LooksAt, Rule, Valid, edit, unsafe_fix
from trio_lint.semantics.receivers import Kind

if TYPE_CHECKING:
    import libcst as cst

_METHODS = ("create_lora_training_client", "create_lora_training_client_async")


def _add_train_unembed(node: cst.CSTNode) -> cst.CSTNode:
    import libcst as cst

    assert isinstance(node, cst.Call)
    args = list(node.args)
    new = cst.Arg(
        keyword=cst.Name("train_unembed"),
        value=cst.Name("False"),
        equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
        ),
    )
    if args:
        last = args[-1]
        if last.comma is cst.MaybeSentinel.DEFAULT:
            args[-1] = last.with_changes(
                comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            )
            args.append(new)
        else:
            # A trailing comma: one argument per line; repeat the layout of the line above.
            between = args[-2].comma if len(args) > 1 else last.comma
            args[-1] = last.with_changes(comma=between)
            args.append(new.with_changes(comma=last.comma))
    else:
        args.append(new)
    return node.with_changes(args=args)


class TrainUnembedDefault(Rule):
    code = "PTR210"
    looks_at = LooksAt(calls=frozenset(_METHODS))
    name = "train-unembed-default"
    message = (
        "`train_unembed` defaults to False on 0.1 and True on 0.2: pass it explicitly so the run "
        "and its `load_state` check mean the same on both"
    )
    severity = Severity.INFO
    # Facts of PyTRIO's own SDK (not Tinker's): see the doc's References.
    pytrio_only = True
    default_enabled = False
    fix_safety = Applicability.UNSAFE
    doc = """
## What it does
Flags `create_lora_training_client(...)` without an explicit `train_unembed`, whose SDK default
is `True` on 0.2 and was `False` on 0.1. The rule itself is off by default: enable it while a
project moves from 0.1 to 0.2 or supports both.

## Why is this bad?
The default changed from `False` (0.1.13) to `True` (0.2.9), so the same script trains a different set of weights after an
upgrade, and 0.2 refuses to `load_state` a checkpoint whose `train_unembed` differs.

## Fix safety
Inserting `train_unembed=False` keeps the 0.1 behaviour; on 0.2 that changes what is trained, so
the fix is unsafe.

## References
- pytrio 0.2.9: `pytrio.ServiceClient.create_lora_training_client` (`train_unembed=True`)
- pytrio 0.1.13: `pytrio.ServiceClient.create_lora_training_client` (`train_unembed=False`)
"""
    evidence = """
- (`029:client/training.py:938-962`)
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "svc = trio.ServiceClient()\n"
            "train = svc.create_lora_training_client(base_model='m', train_unembed=True)\n"
        ),
        Valid("import pytrio as trio\nfrom peft import get_peft_model\nm = get_peft_model(b, c)\n"),
        Valid(
            "import pytrio as trio\n"
            "def make(svc: trio.ServiceClient, **kw):\n"
            "    return svc.create_lora_training_client(base_model='m', **kw)\n"
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "svc = trio.ServiceClient()\n"
            "train = svc.create_lora_training_client(base_model='m', rank=32)\n",
            fixed="import pytrio as trio\n"
            "svc = trio.ServiceClient()\n"
            "train = svc.create_lora_training_client(base_model='m', rank=32, train_unembed=False)\n",
            line=3,
            unsafe=True,
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def main(svc: trio.ServiceClient):\n"
            "    return await svc.create_lora_training_client_async('m')\n",
            fixed="import pytrio as trio\n"
            "async def main(svc: trio.ServiceClient):\n"
            "    return await svc.create_lora_training_client_async('m', train_unembed=False)\n",
            unsafe=True,
        ),
        Invalid(
            "import pytrio as trio\n"
            "train = trio.ServiceClient().create_lora_training_client(\n"
            "    base_model='m',\n"
            "    rank=16,\n"
            ")\n",
            fixed="import pytrio as trio\n"
            "train = trio.ServiceClient().create_lora_training_client(\n"
            "    base_model='m',\n"
            "    rank=16,\n"
            "    train_unembed=False,\n"
            ")\n",
            unsafe=True,
        ),
    )

    def visit_Call(self, node: ast.Call) -> None:
        found = self.model.client_call(node, methods=_METHODS)
        if found is None or found[0] is not Kind.SERVICE_CLIENT or found[1] not in _METHODS:
            return
        if keyword(node, "train_unembed") is None and len(node.args) < 6 and not has_splat(node):
            fix = unsafe_fix(
                "Pass `train_unembed=False` (0.1 behaviour)",
                edit(node, "Call", _add_train_unembed),
            )
            self.report(node, fix=fix)
