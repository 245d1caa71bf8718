"""What the templates read: SDK facts, the trio-lint rule registry and the MCP tool schemas.

The registries grow while other engineers work, so each is read as it is now; a missing
registry renders as empty, and the stale-doc test then fails once it exists and has content.
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any

import pytrio_facts
from pytrio_facts import api_model, porting


@dataclass(frozen=True)
class RuleDoc:
    code: str
    name: str
    message: str
    severity: str
    default_enabled: bool
    fix: str
    sdk: str
    summary: str
    doc: str


@dataclass(frozen=True)
class ToolDoc:
    name: str
    title: str
    description: str
    annotations: dict[str, Any]
    parameters: list[dict[str, Any]] = field(default_factory=list)


def _enum_text(value: object) -> str:
    return str(getattr(value, "value", value) or "").lower()


def _first_sentence(doc: str) -> str:
    """The first sentence of the rule doc's "What it does" paragraph (or of the first paragraph)."""
    text = textwrap.dedent(doc).strip()
    # Rendered docs keep a paragraph on one line, so the first line is the first paragraph.
    match = re.search(r"#+\s*What it does\s*\n(.*?)(?:\n|$)", text)
    paragraph = match.group(1) if match else text.split("\n\n")[0]
    joined = " ".join(paragraph.split())
    sentence = re.split(r"(?<=[.!?])\s", joined, maxsplit=1)[0]
    return sentence.lstrip("#").strip()


def _demote_headings(doc: str, levels: int = 2) -> str:
    """Rule docs use `##` sections; inside the rules reference they sit under a `##` per rule."""
    out, fenced = [], False
    for line in doc.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        demote = not fenced and re.match(r"#{1,4} ", line)
        out.append("#" * levels + line if demote else line)
    return "\n".join(out)


def _rule_doc(rule: Any) -> str:
    """The rule's user documentation as `trio-lint rule CODE` prints it (one renderer for both)."""
    try:
        explain = importlib.import_module("trio_lint.output.explain")
    except ModuleNotFoundError:
        return textwrap.dedent(getattr(rule, "doc", "") or "").strip()
    doc: str = explain.rule_doc(rule)
    return doc.strip()


def lint_rules() -> list[RuleDoc]:
    """Every rule trio-lint registers, sorted by code; [] before the registry exists."""
    try:
        registry = importlib.import_module("trio_lint.rules")
    except ModuleNotFoundError:
        return []
    all_rules = getattr(registry, "all_rules", None)
    if all_rules is None:
        return []
    if hasattr(all_rules, "cache_clear"):
        all_rules.cache_clear()
    docs = []
    for rule in all_rules():
        low, high = getattr(rule, "min_sdk", None), getattr(rule, "max_sdk", None)
        sdk = (
            "all"
            if not (low or high)
            else f"{'>=' + low if low else ''}{',<' + high if high else ''}"
        )
        doc = _rule_doc(rule)
        summary = _first_sentence(doc) if doc else ""
        docs.append(
            RuleDoc(
                code=rule.code,
                name=getattr(rule, "name", ""),
                message=getattr(rule, "message", ""),
                severity=_enum_text(getattr(rule, "severity", "")),
                default_enabled=bool(getattr(rule, "default_enabled", True)),
                fix=_enum_text(getattr(rule, "fix_safety", "")) or "none",
                sdk=sdk.lstrip(","),
                summary=summary or getattr(rule, "message", ""),
                doc=_demote_headings(doc),
            )
        )
    return sorted(docs, key=lambda rule: rule.code)


def _parameters(schema: dict[str, Any]) -> list[dict[str, Any]]:
    required = set(schema.get("required", []))
    rows = []
    for name, prop in schema.get("properties", {}).items():
        kind = prop.get("type") or " | ".join(
            str(option.get("type", "object")) for option in prop.get("anyOf", [])
        )
        rows.append(
            {
                "name": name,
                "type": kind or "object",
                "required": name in required,
                "default": prop.get("default"),
                "description": " ".join(str(prop.get("description", "")).split()),
            }
        )
    return rows


def mcp_tools() -> list[ToolDoc]:
    """The tools trio-mcp publishes, from `mcp_server.registry.tool_catalogue()`, in its order."""
    try:
        registry = importlib.import_module("mcp_server.registry")
    except ModuleNotFoundError:
        return []
    catalogue = getattr(registry, "tool_catalogue", None)
    if catalogue is None:
        return []
    return [
        ToolDoc(
            name=tool["name"],
            title=tool.get("title") or tool["name"],
            description=" ".join(str(tool.get("description", "")).split()),
            annotations=dict(tool.get("annotations") or {}),
            parameters=_parameters(tool.get("input_schema") or {}),
        )
        for tool in catalogue()
    ]


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(value if isinstance(value, list) else str(value))


def mcp_settings() -> list[dict[str, str]]:
    """trio-mcp's settings with their defaults and descriptions, from `mcp_server.config.Config`."""
    try:
        config = importlib.import_module("mcp_server.config")
    except ModuleNotFoundError:
        return []
    settings = []
    for name, info in config.Config.model_fields.items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        if "doc_default" in extra:
            default = str(extra["doc_default"])
        else:
            default = info.default_factory() if info.default_factory else info.default
        settings.append(
            {
                "key": name,
                "value": _toml_value(default),
                "description": info.description or "",
            }
        )
    return settings


@dataclass(frozen=True)
class ConfigureOption:
    name: str
    default: str  # Markdown: the process default of pytrio's Configuration, "none" without one


def _default_text(value: object) -> str:
    from pathlib import Path

    if value is None:
        return "none"
    if value == str(Path.home()):  # computed when pytrio is imported: the user's, not ours
        return "your home directory"
    return f"`{value!r}`"


def configure_options() -> list[ConfigureOption]:
    """`trio.configure`'s keyword names as the installed SDK defines them, with their defaults.

    Read from the SDK's own signature rather than copied, so the docs follow the pinned SDK;
    [] when pytrio is not installed (the stale-doc test then fails once it is).
    """
    try:
        import inspect

        import pytrio
        from pytrio.config.config import Configuration
    except ImportError:
        return []
    fields = Configuration.model_fields
    options = []
    for parameter in inspect.signature(pytrio.configure).parameters.values():
        if parameter.kind is not inspect.Parameter.KEYWORD_ONLY:
            continue  # **unknown_options: accepted, warned about, and ignored
        field_info = fields.get(parameter.name)
        default = None if field_info is None else field_info.default
        options.append(ConfigureOption(parameter.name, _default_text(default)))
    return options


def trio_local_options() -> list[dict[str, str]]:
    """`trio-local run`'s options and their help, from the command's own argparse parser."""
    try:
        cli = importlib.import_module("trio_local.cli")
        config = importlib.import_module("trio_local.config")
    except ModuleNotFoundError:
        return []
    commands = next(
        action
        for action in cli.build_parser()._actions
        if isinstance(action, argparse._SubParsersAction)
    )
    # The data directory's default depends on the environment; the docs name the rule instead.
    here = str(config.default_data_dir())
    options = []
    for action in commands.choices["run"]._actions:
        if isinstance(action, argparse._HelpAction) or action.help in (None, argparse.SUPPRESS):
            continue
        name = max(action.option_strings, key=len)
        if action.nargs != 0:
            name += f" {action.metavar or action.dest.upper()}"
        text = action.help.replace(here, "`~/.local/share/trio-local`, or `$TRIO_LOCAL_DATA_DIR`")
        options.append({"option": name, "help": text})
    return options


def context() -> dict[str, Any]:
    return {
        "facts": pytrio_facts,
        "api": api_model,
        "porting": porting,
        "rules": lint_rules(),
        "tools": mcp_tools(),
        "mcp_settings": mcp_settings(),
        "trio_local_options": trio_local_options(),
        "configure_options": configure_options(),
    }
