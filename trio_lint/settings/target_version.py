"""`target-version`: any released pytrio ("0.2.8"), a line ("0.2" = its newest release), or by
default the installed pytrio (else the newest release known).

The releases are those of `pytrio_facts/api_versions.json` (generated from the wheels on PyPI).
The file is read by path, not through the `pytrio_facts` package, which costs ~10 ms to import on
every start; release strings are parsed by `pytrio_facts.api_model.version_key` (the one parse
of a release), imported only where a comparison or a line needs it.
"""

from __future__ import annotations

import json
import os
import re
import sys
from functools import cache
from pathlib import Path

_DATA = Path(__file__).resolve().parents[2] / "pytrio_facts" / "api_versions.json"


@cache
def before(version: str, release: str) -> bool:
    """Whether `version` is older than `release` ("0.1.13" is before "0.2"; "0.2.0" is not)."""
    from pytrio_facts.api_model import version_key  # imported on use: see the module docstring

    return version_key(version) < version_key(release)


@cache
def release_line(version: str) -> str:
    """The SDK line of `version`: "0.1", or "0.2" for every release since 0.2.0."""
    return "0.1" if before(version, "0.2") else "0.2"


@cache
def released_versions() -> tuple[str, ...]:
    """Every pytrio release the API data covers, oldest first."""
    return tuple(json.loads(_DATA.read_text(encoding="utf-8"))["versions"])


def resolve_version(spec: object) -> str:
    """ "0.2.8" -> "0.2.8"; "0.2" -> the newest 0.2.x release. ValueError lists the valid values."""
    versions = released_versions()
    text = str(spec).strip()
    if text in versions:
        return text
    from pytrio_facts.api_model import version_key  # imported on use: see the module docstring

    if re.fullmatch(r"\d+\.\d+", text):
        line = [v for v in versions if v.startswith(text + ".")]
        if line:
            return max(line, key=version_key)
    lines = sorted({v.rsplit(".", 1)[0] for v in versions}, key=version_key)
    raise ValueError(
        f"must be a released pytrio version ({', '.join(versions)}) or a release line "
        f"({' or '.join(lines)}, meaning its newest release)"
    )


@cache
def installed_version() -> str | None:
    """The installed pytrio's version (None when it is not installed)."""
    return _distribution_version("pytrio")


@cache
def default_version() -> str:
    """The installed pytrio's version when it is a known release, else the newest release."""
    installed = installed_version()
    versions = released_versions()
    if installed in versions:
        return installed
    from pytrio_facts.api_model import version_key

    return max(versions, key=version_key)


def _distribution_version(name: str) -> str | None:
    """The installed version from the `<name>-<version>.dist-info` directory on sys.path.
    (importlib.metadata costs ~0.1 s to import and scan in a large venv; this is a few listdirs
    and runs on every `trio-lint` start.)"""
    prefix = name.replace("-", "_").lower() + "-"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")  # noqa: PTH208 - start-up path, strings suffice
        except OSError:
            continue
        for candidate in names:
            lowered = candidate.lower()
            if lowered.startswith(prefix) and lowered.endswith(".dist-info"):
                return candidate[len(prefix) : -len(".dist-info")]
    return None
