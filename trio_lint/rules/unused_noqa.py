"""PTR902: a `# noqa: PTRnnn` that suppresses nothing (off by default; select it to audit noqa comments)."""

from trio_lint.lint.engine_codes import NAMES, UNUSED_NOQA
from trio_lint.output.diagnostics import Applicability, Severity
from trio_lint.rules.base import Invalid, Rule, Valid


class UnusedNoqaRule(Rule):
    code = UNUSED_NOQA
    name = NAMES[UNUSED_NOQA]
    message = "Unused `noqa` directive"
    severity = Severity.WARNING
    default_enabled = False
    fix_safety = Applicability.SAFE
    doc = """
## What it does
Reports `# noqa` directives naming PTR codes that suppress no finding on their line (codes of other
tools are left alone, as ruff's `lint.external` does).

## Why is this bad?
Stale suppressions hide future findings on the line and mislead readers.

## Fix safety
Safe: only the unused codes (or the whole comment, if nothing else remains) are removed.
"""
    VALID = (
        Valid(
            "import pytrio as trio\nparams = trio.SamplingParams(max_new_tokens=64)  # noqa: PTR201\n",
            config={"extend-select": ["PTR201"]},
        ),
        Valid("import pytrio as trio\nimport os  # noqa: F401\n"),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\nparams = trio.SamplingParams(max_tokens=64)  # noqa: PTR201\n",
            fixed="import pytrio as trio\nparams = trio.SamplingParams(max_tokens=64)\n",
            line=2,
            config={"extend-select": ["PTR201"]},
        ),
        Invalid(
            "import pytrio as trio\nx = 1  # keep  # noqa: PTR201, E501\n",
            fixed="import pytrio as trio\nx = 1  # keep  # noqa: E501\n",
        ),
    )
