"""Which optional extra of pytrio-skill a console script needs, and what of it is missing.

Read from the installed distribution's own metadata (the extras in pyproject.toml), so the list
is never copied: `trio-mcp` needs `[mcp]`, `trio-local` needs `[local]`, trio-lint needs none.
"""

from __future__ import annotations

import importlib.metadata
import re
import sys

DISTRIBUTION = "pytrio-skill"
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?[^;]*(?:;(.*))?$")
_EXTRA_MARKER = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def missing_requirements(
    extra: str, requirements: list[str] | None = None, distribution: str = DISTRIBUTION
) -> list[str]:
    """Names of the distributions `extra` needs that are not installed ([] when the metadata
    of `distribution` cannot be read, as in a bare source checkout: nothing to tell then)."""
    if requirements is None:
        try:
            requirements = importlib.metadata.requires(distribution) or []
        except importlib.metadata.PackageNotFoundError:
            return []
    missing: list[str] = []
    pending, seen = [extra], set()
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        for requirement in requirements:
            match = _REQUIREMENT.match(requirement)
            if match is None:
                continue
            name, extras, marker = match.groups()
            if current not in _EXTRA_MARKER.findall(marker or ""):
                continue
            if _normalize(name) == _normalize(distribution):  # e.g. mcp = ["pytrio-skill[sdk]"]
                pending.extend(e.strip() for e in (extras or "").split(",") if e.strip())
                continue
            try:
                importlib.metadata.version(name)
            except importlib.metadata.PackageNotFoundError:
                if name not in missing:
                    missing.append(name)
    return missing


def require_extra(extra: str, command: str) -> None:
    """Exit with a one-line fix when `command`'s extra is not installed."""
    missing = missing_requirements(extra)
    if missing:
        sys.stderr.write(
            f"{command} needs the `{extra}` extra of {DISTRIBUTION}, which is not installed "
            f"(missing: {', '.join(missing)}).\n"
            f"Install it with:  pip install '{DISTRIBUTION}[{extra}]'\n"
        )
        raise SystemExit(2)
