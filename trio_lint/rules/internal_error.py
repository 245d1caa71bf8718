"""PTR903: a rule crashed on this file (a trio-lint bug); the other rules and files still ran."""

from trio_lint.lint.engine_codes import INTERNAL_ERROR, NAMES
from trio_lint.output.diagnostics import Severity
from trio_lint.rules.base import Rule


class InternalErrorRule(Rule):
    code = INTERNAL_ERROR
    name = NAMES[INTERNAL_ERROR]
    message = "internal error in a rule"
    severity = Severity.ERROR
    doc = """
## What it does
Reports that a rule raised an exception on this file. The message names the rule and the exception.

## Why is this bad?
It is a bug in trio-lint: that rule did not check the file. Please report it with the file.

## Fix safety
No fix.
"""
