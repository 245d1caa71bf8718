"""PTR900: the file (or Markdown block / notebook) does not parse as Python."""

from trio_lint.lint.engine_codes import NAMES, SYNTAX_ERROR
from trio_lint.output.diagnostics import Severity
from trio_lint.rules.base import Invalid, Rule, Valid


class SyntaxErrorRule(Rule):
    code = SYNTAX_ERROR
    name = NAMES[SYNTAX_ERROR]
    message = "SyntaxError"
    severity = Severity.ERROR
    doc = """
## What it does
Reports a file that Python cannot parse, with the line and column of the error.

## Why is this bad?
No other rule can check the file; the script would fail at import time anyway.

## Fix safety
No fix.
"""
    VALID = (Valid("import pytrio as trio\n"),)
    INVALID = (Invalid("import pytrio as trio\ndef train(:\n    pass\n", line=2),)
