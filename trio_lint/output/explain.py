"""`trio-lint rule CODE` (the rule's documentation) and `trio-lint rule --all` (the catalogue)."""

from __future__ import annotations

import json
import re
import textwrap

from trio_lint.output.diagnostics import Applicability
from trio_lint.rules.base import SDK_NAMES, Invalid, Rule, Valid

_FIXABILITY = {
    Applicability.SAFE: "fix (safe)",
    Applicability.UNSAFE: "fix (unsafe)",
    Applicability.NONE: "no fix",
}


def applies_to(rule: type[Rule]) -> str:
    """Which code the rule checks (`Rule.sdks`): "PyTRIO code" or "PyTRIO code and Tinker code"
    (a module that imports `tinker` and not `pytrio`, with `sdk-modules` naming tinker)."""
    return " and ".join(f"{SDK_NAMES[name]} code" for name in sorted(rule.sdks))


def scope_text(rule: type[Rule]) -> str:
    sdk = applies_to(rule)
    low, high = rule.min_sdk, rule.max_sdk
    versions = "all versions"
    if low or high:
        versions = (
            f"{'>=' + low if low else ''}{',' if low and high else ''}{'<' + high if high else ''}"
        )
    return f"{sdk}; SDK {versions}"


# A line that starts its own line in Markdown: list items, tables, headings.
_BLOCK_START = re.compile(r"\s*(?:[-*+] |\d+\. |\||#)")
_FENCE_LANGUAGE = {".py": "python", ".pyi": "python", ".ipynb": "json", ".md": "markdown"}


def unwrap(text: str) -> str:
    """Join hard-wrapped prose so each paragraph or list item is one line (terminals and
    renderers wrap it once); fenced code is kept as written."""
    out: list[str] = []
    fenced = joinable = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = not fenced
            out.append(line)
            joinable = False
        elif fenced:
            out.append(line)
        elif not stripped:
            out.append("")
            joinable = False
        elif joinable and not _BLOCK_START.match(line):
            out[-1] = f"{out[-1]} {stripped}"
        else:
            out.append(line.rstrip())
            joinable = not stripped.startswith(("|", "#"))
    return "\n".join(out)


def _toml_value(value: object) -> str:
    return json.dumps(value)


def _example(example: Valid | Invalid) -> str:
    """A documented example as the user sees it: its configuration (if any), then its code."""
    parts = []
    if example.config:
        table = "\n".join(f"{key} = {_toml_value(value)}" for key, value in example.config.items())
        parts.append(f"With this in `pyproject.toml`:\n```toml\n[tool.trio-lint]\n{table}\n```")
    suffix = "." + example.path.rsplit(".", 1)[-1] if "." in example.path else ".py"
    if example.path != "example.py":
        parts.append(f"In `{example.path}`:")
    code = textwrap.dedent(example.code).rstrip("\n")
    parts.append(f"```{_FENCE_LANGUAGE.get(suffix, '')}\n{code}\n```")
    return "\n\n".join(parts)


def _sections(doc: str) -> list[tuple[str, str]]:
    """`## Title` sections of a rule doc, in order (text before the first heading is dropped)."""
    found: list[tuple[str, str]] = []
    for chunk in re.split(r"^## ", textwrap.dedent(doc).strip(), flags=re.M)[1:]:
        title, _, body = chunk.partition("\n")
        found.append((title.strip(), body.strip()))
    return found


def rule_doc(rule: type[Rule]) -> str:
    """The rule's documentation for users: its prose sections, unwrapped, with the Example and
    "Use instead" rendered from its first INVALID and first VALID example (so every example a
    user copies is one the tests run). `rule.evidence` is for maintainers and never shown."""
    blocks: list[str] = []
    for title, body in _sections(rule.doc):
        blocks.append(f"## {title}\n{unwrap(body)}")
        if title == "What it does":
            blocks.append(f"Applies to: {applies_to(rule)}.")
        if title == "Why is this bad?" and rule.INVALID:
            blocks.append(f"## Example\n{_example(rule.INVALID[0])}")
            if rule.VALID:
                valid = _example(rule.VALID[0])
                blocks.append(f"Use instead:\n{'' if valid.startswith('```') else chr(10)}{valid}")
    return "\n\n".join(blocks) + "\n"


def rule_markdown(rule: type[Rule]) -> str:
    header = [
        f"# {rule.name} ({rule.code})",
        "",
        f"Severity: {rule.severity.value}. Default: {'on' if rule.default_enabled else 'off'}."
        f" Fix: {_FIXABILITY[rule.fix_safety]}. Applies to: {scope_text(rule)}.",
        "",
        f"Message: {rule.message}",
    ]
    return "\n".join(header) + "\n\n" + rule_doc(rule)


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
        "sdks": sorted(rule.sdks),
        "min_sdk": rule.min_sdk,
        "max_sdk": rule.max_sdk,
        "explanation": rule_doc(rule).strip(),
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
