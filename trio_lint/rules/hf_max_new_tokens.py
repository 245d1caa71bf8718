"""PTR201 hf-max-new-tokens: `SamplingParams(max_new_tokens=...)`, the HuggingFace `generate` name."""

from __future__ import annotations

import ast

from trio_lint.output.diagnostics import Applicability, Severity
from trio_lint.rules.base import Invalid, LooksAt, Rule, Valid, edit, rename_keyword, safe_fix


class HfMaxNewTokens(Rule):
    code = "PTR201"
    supersedes = frozenset({"pytrio.SamplingParams(max_new_tokens=)"})
    name = "hf-max-new-tokens"
    looks_at = LooksAt(sdk_calls=frozenset({"SamplingParams"}))
    message = "`SamplingParams` has no `max_new_tokens`; the PyTRIO name is `max_tokens`"
    severity = Severity.ERROR
    fix_safety = Applicability.SAFE
    doc = """
## What it does
Flags `max_new_tokens=` passed to `SamplingParams`, the keyword HuggingFace's `generate()` uses.

## Why is this bad?
PyTRIO's `SamplingParams` forbids unknown fields (`extra="forbid"`), so the call raises a pydantic
`ValidationError` before anything is sampled; and on pytrio 0.2 `max_tokens` is required for
every sample call, so the intended limit is what the request needs. In Tinker code it fails
silently instead: tinker 0.38.0's `SamplingParams` ignores unknown fields (`extra="ignore"`), so
`max_new_tokens` is dropped without an error and `max_tokens` stays `None`: the limit written
never reaches the request.

## Fix safety
Safe: `max_tokens` is the same limit (new tokens generated after the prompt). No fix is offered
when the call already passes `max_tokens`, since renaming would duplicate the keyword.

## References
- pytrio 0.2.9: `pytrio.SamplingParams`
- tinker 0.38.0: `tinker.types.SamplingParams`
"""
    evidence = """
- `SamplingParams` has `max_tokens` ("max tokens generated per sequence"), no `max_new_tokens`
  (`029:types/sample/sampling_params.py:8-36`), and forbids unknown fields
  (`029:types/base.py:12-15`); so does 0.1.13 (`013:types/base.py:5-9`).
- 0.2 refuses a sample without `max_tokens > 0`, from 0.2.0 (`020:client/sampling.py:108-112`)
  to 0.2.9 (`029:client/sampling.py:168-172`).
- HuggingFace's name: `transformers.GenerationConfig.max_new_tokens`,
  https://huggingface.co/docs/transformers/main_classes/text_generation
- tinker 0.38.0: `tinker.types.SamplingParams` has `max_tokens: Optional[int] = None` and no
  `max_new_tokens` (`tinker/types/_pydantic_types/sampling_params.py:6-8`); its base
  `tinker._models.BaseModel` sets `extra="ignore"` (`tinker/_models.py:88-94`), so the unknown
  keyword is dropped, not refused.
"""
    VALID = (
        Valid("import pytrio as trio\np = trio.SamplingParams(max_tokens=64)\n"),
        Valid(
            "from transformers import GenerationConfig\ng = GenerationConfig(max_new_tokens=64)\n"
        ),
        Valid("import pytrio\nmodel.generate(ids, max_new_tokens=64)\n"),
        Valid("import pytrio\nclass SamplingParams: ...\np = SamplingParams(max_new_tokens=1)\n"),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\np = trio.SamplingParams(max_new_tokens=64, temperature=0.7)\n",
            fixed="import pytrio as trio\np = trio.SamplingParams(max_tokens=64, temperature=0.7)\n",
            line=2,
            column=25,
        ),
        Invalid(
            "from pytrio.types import SamplingParams as SP\np = SP(\n    max_new_tokens = 8,  # keep\n)\n",
            fixed="from pytrio.types import SamplingParams as SP\np = SP(\n    max_tokens = 8,  # keep\n)\n",
            line=3,
        ),
        Invalid(
            "import tinker\np = tinker.types.SamplingParams(max_new_tokens=8)\n",
            fixed="import tinker\np = tinker.types.SamplingParams(max_tokens=8)\n",
            config={"sdk-modules": ["pytrio", "tinker"]},
        ),
        Invalid(
            "import pytrio as t\np = t.SamplingParams(max_tokens=4, max_new_tokens=8)\n", fixed=None
        ),
    )

    def visit_Call(self, node: ast.Call) -> None:
        if not self.model.is_sdk(node.func, "SamplingParams"):
            return
        names = {keyword.arg for keyword in node.keywords}
        for keyword in node.keywords:
            if keyword.arg == "max_new_tokens":
                fix = None
                if "max_tokens" not in names:
                    fix = safe_fix(
                        "Rename to `max_tokens`",
                        edit(keyword, "Arg", rename_keyword("max_tokens")),
                    )
                self.report(keyword, fix=fix)
