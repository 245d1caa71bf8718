"""`trio-lint rule CODE` (the rule's documentation) and `trio-lint rule --all` (the catalogue)."""

from __future__ import annotations

import json

from trio_lint.diagnostics import Applicability
from trio_lint.rules.base import Rule

_FIXABILITY = {
    Applicability.SAFE: "fix (safe)",
    Applicability.UNSAFE: "fix (unsafe)",
    Applicability.NONE: "no fix",
}


def scope_text(rule: type[Rule]) -> str:
    sdk = "pytrio only" if rule.pytrio_only else "every sdk-module (pytrio, tinker)"
    low, high = rule.min_sdk, rule.max_sdk
    versions = "all versions"
    if low or high:
        versions = (
            f"{'>=' + low if low else ''}{',' if low and high else ''}{'<' + high if high else ''}"
        )
    return f"{sdk}; SDK {versions}"


def rule_markdown(rule: type[Rule]) -> str:
    header = [
        f"# {rule.name} ({rule.code})",
        "",
        f"Severity: {rule.severity.value}. Default: {'on' if rule.default_enabled else 'off'}."
        f" Fix: {_FIXABILITY[rule.fix_safety]}. Applies to: {scope_text(rule)}.",
        "",
        f"Message: {rule.message}",
    ]
    return "\n".join(header) + "\n" + rule.doc.rstrip() + "\n"


def rule_json(rule: type[Rule]) -> dict:
    return {
        "code": rule.code,
        "name": rule.name,
        "linter": "trio-lint",
        "summary": rule.message,
        "severity": rule.severity.value,
        "default": rule.default_enabled,
        "fix_availability": {"safe": "Always", "unsafe": "Sometimes", "none": "None"}[
            rule.fix_safety.value
        ],
        "fix_safety": rule.fix_safety.value,
        "pytrio_only": rule.pytrio_only,
        "min_sdk": rule.min_sdk,
        "max_sdk": rule.max_sdk,
        "explanation": rule.doc.strip(),
    }


def catalogue_table(rules: list[type[Rule]]) -> str:
    rows = [("code", "name", "default", "severity", "fix")]
    rows += [
        (
            r.code,
            r.name,
            "on" if r.default_enabled else "off",
            r.severity.value,
            _FIXABILITY[r.fix_safety],
        )
        for r in rules
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        + "\n"
        for row in rows
    )


def catalogue_json(rules: list[type[Rule]]) -> str:
    return json.dumps([rule_json(r) for r in rules], indent=2) + "\n"
