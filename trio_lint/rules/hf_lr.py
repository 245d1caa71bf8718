"""PTR202 hf-lr: `AdamParams(lr=...)`, the PyTorch optimizer keyword."""

from __future__ import annotations

import ast

from trio_lint.output.diagnostics import Applicability, Severity
from trio_lint.rules.base import Invalid, LooksAt, Rule, Valid, edit, rename_keyword, safe_fix


class HfLr(Rule):
    code = "PTR202"
    supersedes = frozenset({"pytrio.AdamParams(lr=)"})
    name = "hf-lr"
    looks_at = LooksAt(sdk_calls=frozenset({"AdamParams"}))
    message = "`AdamParams` has no `lr`; the PyTRIO name is `learning_rate`"
    severity = Severity.ERROR
    fix_safety = Applicability.SAFE
    doc = """
## What it does
Flags `lr=` passed to `AdamParams`, the keyword of `torch.optim.AdamW` and HuggingFace's
`TrainingArguments(learning_rate=...)` habits mixed up.

## Why is this bad?
`AdamParams` forbids unknown fields, so `AdamParams(lr=1e-4)` raises a pydantic `ValidationError`
when the optimizer step is built, after the forward-backward already ran.

## Fix safety
Safe: the same learning rate under its PyTRIO name. No fix when `learning_rate` is also passed.

## References
- pytrio 0.2.9: `pytrio.AdamParams`
"""
    evidence = """
- `AdamParams` has `learning_rate`, no `lr` (`029:types/optim_step/adam_params.py:6-34`;
  `013:types/optim_step/adam_params.py:4-6`), and forbids unknown fields
  (`029:types/base.py:12-15`, `013:types/base.py:5-9`).
- `lr` is PyTorch's keyword: https://pytorch.org/docs/stable/generated/torch.optim.AdamW.html;
  `learning_rate` HuggingFace's:
  https://huggingface.co/docs/transformers/main_classes/trainer#transformers.TrainingArguments
"""
    VALID = (
        Valid("import pytrio as trio\nadam = trio.AdamParams(learning_rate=1e-4)\n"),
        Valid("import pytrio\nimport torch\nopt = torch.optim.AdamW(params, lr=1e-4)\n"),
        Valid("import pytrio as trio\ndef f(AdamParams):\n    return AdamParams(lr=1)\n"),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\nadam = trio.AdamParams(lr=1e-4, beta1=0.9)\n",
            fixed="import pytrio as trio\nadam = trio.AdamParams(learning_rate=1e-4, beta1=0.9)\n",
            line=2,
            column=24,
        ),
        Invalid(
            "from pytrio import AdamParams\nstep = tc.optim_step(AdamParams(lr=2e-5))\n",
            fixed="from pytrio import AdamParams\nstep = tc.optim_step(AdamParams(learning_rate=2e-5))\n",
        ),
        Invalid(
            "import pytrio as trio\nadam = trio.AdamParams(lr=1, learning_rate=2)\n", fixed=None
        ),
    )

    def visit_Call(self, node: ast.Call) -> None:
        if not self.model.is_sdk(node.func, "AdamParams"):
            return
        names = {keyword.arg for keyword in node.keywords}
        for keyword in node.keywords:
            if keyword.arg == "lr":
                fix = None
                if "learning_rate" not in names:
                    fix = safe_fix(
                        "Rename to `learning_rate`",
                        edit(keyword, "Arg", rename_keyword("learning_rate")),
                    )
                self.report(keyword, fix=fix)
