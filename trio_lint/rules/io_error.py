"""PTR901: the file cannot be read or decoded (not UTF-8 / its declared encoding, too large, bad notebook)."""

from trio_lint.lint.engine_codes import IO_ERROR, NAMES
from trio_lint.output.diagnostics import Severity
from trio_lint.rules.base import Invalid, Rule, Valid


class IoErrorRule(Rule):
    code = IO_ERROR
    name = NAMES[IO_ERROR]
    message = "cannot read the file"
    severity = Severity.ERROR
    doc = """
## What it does
Reports a file trio-lint cannot read: bytes that are not valid in the file's encoding (UTF-8 unless
a
PEP 263 coding cookie says otherwise), files over 10 MiB, notebooks that are not valid JSON.

## Why is this bad?
The file is not checked; the run carries on with the other files.

## Fix safety
No fix.
"""
    VALID = (Valid("# -*- coding: latin-1 -*-\nimport pytrio as trio\n"),)
    INVALID = (Invalid('{"cells": 3, "pytrio": 1}', path="bad.ipynb"),)
