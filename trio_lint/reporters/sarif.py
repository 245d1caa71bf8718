"""SARIF 2.1.0: one run, the tool's rules, one result per finding (with fixes when known)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from trio_lint.output.diagnostics import Diagnostic, Severity

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.CONVENTION: "note",
    Severity.INFO: "note",
}


def _uri(path: str) -> str:
    candidate = Path(path)
    return candidate.as_posix() if not candidate.is_absolute() else candidate.as_uri()


def _region(line: int, column: int, end_line: int, end_column: int) -> dict:
    return {
        "startLine": line,
        "startColumn": column,
        "endLine": end_line,
        "endColumn": max(end_column, 1),
    }


def _rule(rule) -> dict:
    from trio_lint.output.explain import rule_doc

    doc = rule_doc(rule).strip()
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.message},
        "fullDescription": {"text": doc or rule.message},
        "help": {"text": doc or rule.message, "markdown": doc},
        "defaultConfiguration": {"level": _LEVEL[rule.severity], "enabled": rule.default_enabled},
        "properties": {"fix": rule.fix_safety.value},
    }


def _result(d: Diagnostic, index: dict[str, int]) -> dict:
    result: dict = {
        "ruleId": d.code,
        "level": _LEVEL[d.severity],
        "message": {"text": d.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": _uri(d.path)},
                    "region": _region(d.line, d.column, d.end_line, d.end_column),
                }
            }
        ],
    }
    if d.code in index:
        result["ruleIndex"] = index[d.code]
    if d.cell is not None:
        result["properties"] = {"cell": d.cell}
    if d.fix is not None and d.fix.edits:
        result["fixes"] = [
            {
                "description": {"text": d.fix.message},
                "artifactChanges": [
                    {
                        "artifactLocation": {"uri": _uri(d.path)},
                        "replacements": [
                            {
                                "deletedRegion": _region(
                                    e.location.row,
                                    e.location.column,
                                    e.end_location.row,
                                    e.end_location.column,
                                ),
                                "insertedContent": {"text": e.content},
                            }
                            for e in d.fix.edits
                        ],
                    }
                ],
            }
        ]
    return result


def render(diagnostics: Sequence[Diagnostic]) -> str:
    from trio_lint import __version__
    from trio_lint.rules import all_rules

    rules = list(all_rules())
    index = {rule.code: number for number, rule in enumerate(rules)}
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "trio-lint",
                        "version": __version__,
                        "rules": [_rule(rule) for rule in rules],
                    }
                },
                "results": [_result(d, index) for d in diagnostics],
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"
