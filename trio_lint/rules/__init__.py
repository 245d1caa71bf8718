"""The rule registry: every module in this package defines one `Rule` subclass, found at import."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from typing import TYPE_CHECKING

from trio_lint.rules.base import Rule

if TYPE_CHECKING:
    from trio_lint.settings.config import LintConfig

PREFIX = "PTR"
_NOT_RULES = {"base"}


@cache
def all_rules() -> tuple[type[Rule], ...]:
    """Every registered rule, sorted by code."""
    found: list[type[Rule]] = []
    for info in pkgutil.iter_modules(__path__):
        # `_` modules are helpers, packages (checkers/) hold the checkers of several codes.
        if info.name in _NOT_RULES or info.name.startswith("_") or info.ispkg:
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        classes = [
            value
            for value in vars(module).values()
            if isinstance(value, type)
            and issubclass(value, Rule)
            and value is not Rule
            and value.__module__ == module.__name__
        ]
        if len(classes) != 1:
            raise RuntimeError(f"{module.__name__} must define exactly one Rule subclass")
        found.append(classes[0])
    return tuple(sorted(found, key=lambda rule: rule.code))


@cache
def rules_by_code() -> dict[str, type[Rule]]:
    return {rule.code: rule for rule in all_rules()}


def names_of(rule: type[Rule]) -> tuple[str, ...]:
    """The rule's name and the names it had before (`former_names`), so a configuration or
    command line written against an older trio-lint still selects or ignores it."""
    return (rule.name, *getattr(rule, "former_names", ()))


def get_rule(code_or_name: str) -> type[Rule] | None:
    key = code_or_name.strip()
    for rule in all_rules():
        if key.upper() == rule.code or key in names_of(rule):
            return rule
    return None


@cache
def known_selectors() -> list[str]:
    selectors = {"ALL", PREFIX}
    for rule in all_rules():
        selectors.update(names_of(rule))
        for end in range(len(PREFIX) + 1, len(rule.code) + 1):
            selectors.add(rule.code[:end])
    return sorted(selectors)


def is_known_selector(selector: str) -> bool:
    return selector in known_selectors()


def matches(rule: type[Rule], selector: str) -> bool:
    return selector == "ALL" or selector in names_of(rule) or rule.code.startswith(selector)


def select_rules(config: LintConfig) -> tuple[type[Rule], ...]:
    """Rules active under `config`: `select` (or the default-on set), plus `extend-select`, minus
    `ignore`, restricted to rules whose SDK version range contains `target-version`."""
    if config.select is None:
        chosen = {rule for rule in all_rules() if rule.default_enabled}
    else:
        chosen = {rule for rule in all_rules() if any(matches(rule, s) for s in config.select)}
    chosen |= {rule for rule in all_rules() if any(matches(rule, s) for s in config.extend_select)}
    chosen = {rule for rule in chosen if not any(matches(rule, s) for s in config.ignore)}
    return tuple(
        sorted(
            (rule for rule in chosen if rule.applies_to(config.target_version)),
            key=lambda rule: rule.code,
        )
    )
