"""PTR203 unknown-type-field: a keyword that no release of a pytrio type (`AdamParams`,
`SamplingParams`, `Datum`, ...) has as a field."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from trio_lint.output.diagnostics import Applicability, Severity
from trio_lint.rules.base import PYTRIO, Invalid, Valid, edit, rename_keyword, safe_fix
from trio_lint.rules.checkers import conformance

if TYPE_CHECKING:
    import libcst as cst

# Which fields a type has comes from the API data of every release (a field of an older or newer
# release is PTR004's or PTR007's); `max_new_tokens` and `lr` are PTR201's and PTR202's. What
# follows is advice for habits from PyTorch and Hugging Face.
_RENAMES = {("AdamParams", "epsilon"): "eps"}
_HINTS = {
    "betas": "write `beta1=..., beta2=...`",
    "num_return_sequences": "pass `num_samples=` to `sample(...)` instead",
    "do_sample": "PyTRIO always samples; use `temperature` (0 for greedy-like decoding)",
    "num_beams": "beam search is not available; sample several with `num_samples=`",
    "repetition_penalty": "not supported by the sampler",
    "stop_sequences": "use `stop=` (a string, a list of strings or a list of token ids)",
    "stop_token_ids": "use `stop=[...]` with token ids",
    "max_length": "use `max_tokens` (tokens to generate, not total length)",
    "weight_decay_rate": "use `weight_decay`",
    "clip_grad_norm": "use `grad_clip_norm` (0.2)",
    "max_grad_norm": "use `grad_clip_norm` (0.2)",
    "tokens": "build it with `trio.ModelInput.from_ints(tokens)`",
}


def _betas_to_fields(call: cst.CSTNode) -> cst.CSTNode:
    import libcst as cst

    assert isinstance(call, cst.Call)
    args: list[cst.Arg] = []
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "betas":
            tup = arg.value
            assert isinstance(tup, cst.Tuple)
            first, second = (element.value for element in tup.elements)
            args.append(arg.with_changes(keyword=cst.Name("beta1"), value=first))
            args.append(arg.with_changes(keyword=cst.Name("beta2"), value=second))
        else:
            args.append(arg)
    return call.with_changes(args=args)


class UnknownTypeField(conformance.ConformanceRule):
    code = "PTR203"
    sdks = PYTRIO  # its facts are PyTRIO's type fields (pytrio_facts/api_versions.json)
    name = "unknown-type-field"
    message = "`{type}` has no field `{field}`: {hint}"
    severity = Severity.ERROR
    fix_safety = Applicability.SAFE
    doc = """
## What it does
Flags keyword arguments that no pytrio release defines as a field of the type being built
(`trio.AdamParams`, `trio.SamplingParams`, `trio.Datum`, `trio.ModelInput`, ...), such as
PyTorch's `betas=`/`epsilon=` or Hugging Face's `do_sample=`, `num_beams=`,
`num_return_sequences=`, `repetition_penalty=`. The fields of every release come from its wheel;
a field of an older or newer release is reported as removed (PTR004) or added (PTR007).

## Why is this bad?
Every PyTRIO type is a Pydantic model with `extra="forbid"`, so the
constructor raises `ValidationError` at run time. The fields are
`AdamParams(learning_rate, beta1, beta2, eps, weight_decay, grad_clip_norm)` and
`SamplingParams(max_tokens, seed, stop, temperature, top_k, top_p)` on 0.2.9.
`max_new_tokens` and `lr` have their own rules (PTR201, PTR202).

## Fix safety
`epsilon` -> `eps` and `betas=(a, b)` -> `beta1=a, beta2=b` (for a tuple literal of two) are safe
renames of the same quantity. Other keywords have no fix.

## References
- pytrio 0.2.9: `pytrio.AdamParams`, `pytrio.SamplingParams`
"""
    evidence = """
- (`029:types/base.py:9-15`)
"""
    VALID = (
        Valid("import pytrio as trio\nadam = trio.AdamParams(learning_rate=1e-4, beta2=0.95)\n"),
        Valid(
            "import pytrio as trio\nimport torch\nopt = torch.optim.AdamW(p, betas=(0.9, 0.95))\n"
        ),
        Valid(
            "import pytrio as trio\nfrom vllm import SamplingParams\n"
            "sp = SamplingParams(max_tokens=8, repetition_penalty=1.1)\n"
        ),
        Valid("import pytrio as trio\nsp = trio.SamplingParams(**config)\n"),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\nadam = trio.AdamParams(learning_rate=1e-4, epsilon=1e-8)\n",
            fixed="import pytrio as trio\nadam = trio.AdamParams(learning_rate=1e-4, eps=1e-8)\n",
            line=2,
        ),
        Invalid(
            "import pytrio as trio\nadam = trio.AdamParams(learning_rate=1e-4, betas=(0.9, 0.95))\n",
            fixed="import pytrio as trio\n"
            "adam = trio.AdamParams(learning_rate=1e-4, beta1=0.9, beta2=0.95)\n",
        ),
        Invalid(
            "import pytrio as trio\n"
            "sp = trio.SamplingParams(max_tokens=64, do_sample=True, num_return_sequences=4)\n",
            count=2,
            message_contains="do_sample",
        ),
        Invalid(
            "from pytrio.types import SamplingParams\nsp = SamplingParams(max_tokens=8, num_beams=4)\n",
        ),
        Invalid(
            "import pytrio as trio\nprompt = trio.ModelInput(tokens=[1, 2, 3])\n",
            message_contains="`ModelInput` has no field `tokens`",
        ),
    )

    @classmethod
    def report_issue(
        cls, checker: conformance.ConformanceChecker, issue: conformance.Issue, node: ast.AST
    ) -> None:
        if not isinstance(issue.node, ast.keyword):
            return
        assert isinstance(node, ast.Call)  # keyword issues are found on calls
        given = {kw.arg for kw in node.keywords}
        kw = issue.node
        type_name = issue.owner
        field = issue.name
        fix = None
        rename = _RENAMES.get((type_name, field))
        if rename is not None and rename not in given:
            fix = safe_fix(f"Rename to `{rename}`", edit(kw, "Arg", rename_keyword(rename)))
            hint = f"use `{rename}`"
        elif field == "betas":
            hint = _HINTS[field]
            pair = kw.value
            if (
                isinstance(pair, ast.Tuple)
                and len(pair.elts) == 2
                and not {"beta1", "beta2"} & given
            ):
                fix = safe_fix("Split into `beta1`/`beta2`", edit(node, "Call", _betas_to_fields))
        else:
            hint = _HINTS.get(field, "remove it (the type forbids unknown fields)")
        checker.report(
            kw, cls.message.format(type=type_name, field=field, hint=hint), fix=fix, code=cls.code
        )
