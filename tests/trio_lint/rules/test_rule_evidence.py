"""Every rule's `evidence` (for maintainers, never printed) says where its claims were checked, in
one format, and its citations of the installed SDK point at lines that exist.

The format: one or more entries, each a line starting with "- " (continuation lines indented),
holding citations in backticks:
- SDK source: `RRR:path` or `RRR:path:lines`. RRR names the pytrio release (`013` = 0.1.13,
  `029` = 0.2.9: "0", the minor version, the last digit of the patch); path is relative to the
  wheel's `pytrio/` package, or `pytrio-X.Y.Z.dist-info/METADATA` (the README); lines are `N`,
  `N-M`, or several of those joined by ",".
- a file of this repository generated from the wheels (`pytrio_facts/api_versions.json`).
Besides, an entry may cite a public URL, or a library release and symbol for Python or
third-party behaviour (tinker 0.38.0: `tinker.types.LossFnType`). Research notes, issue numbers
and the process are never cited. Each rule below 900 cites the SDK (or generated facts) at least
once.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import metadata
from pathlib import Path

import pytest
import pytrio

from tests.trio_lint.rules._private_refs import private_references
from trio_lint.rules import all_rules

REPOSITORY = Path(__file__).resolve().parents[3]
SITE_PACKAGES = Path(pytrio.__file__).resolve().parent.parent
INSTALLED = "0.2.9"

LINES = r"\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*"
SDK_CITATION = re.compile(
    rf"(?P<release>\d{{3}}):(?P<path>[\w.-]+(?:/[\w.-]+)*)(?::(?P<lines>{LINES}))?"
)
# A backticked span that starts like an SDK citation must be one.
LOOKS_LIKE_SDK = re.compile(r"\d{3}:")
# Outside backticks, "029:client/x.py" or "x.py:12-30" is a citation that lost its backticks.
BARE_SDK = re.compile(r"\b\d{3}:[\w./-]+\.py|\.py:\d")
REPOSITORY_FILE = re.compile(r"pytrio_facts/[\w./-]+")
# `private_references` also flags SDK file:line positions, which evidence is made of.
SDK_POSITION = re.compile(r"\d{3}:|\.py:\d")

RULES = [pytest.param(rule, id=rule.code) for rule in all_rules() if rule.code < "PTR900"]


@cache
def releases() -> dict[str, str]:
    """Release code -> release, for every release the API facts were generated from."""
    versions = json.loads((REPOSITORY / "pytrio_facts" / "api_versions.json").read_text())
    codes: dict[str, str] = {}
    for version in versions["versions"]:
        major, minor, patch = version.split(".")
        code = f"{major}{minor}{patch[-1]}"
        assert code not in codes, f"{version} and {codes[code]} share the code {code}"
        codes[code] = version
    return codes


def entries(evidence: str) -> list[str]:
    """The bullet entries of an evidence text; raises on a line that belongs to none."""
    found: list[str] = []
    for line in evidence.strip("\n").splitlines():
        if line.startswith("- "):
            found.append(line[2:])
        elif line.startswith("  ") and found and line.strip():
            found[-1] += " " + line.strip()
        else:
            raise ValueError(f"not an entry or its continuation: {line!r}")
    return found


def sdk_citations(entry: str) -> list[re.Match[str]]:
    """The SDK citations of one entry; raises on a malformed one."""
    spans = re.findall(r"`([^`]+)`", entry)
    outside = re.sub(r"`[^`]+`", "``", entry)
    if BARE_SDK.search(outside):
        raise ValueError(f"SDK citation outside backticks: {BARE_SDK.search(outside).group(0)!r}")
    found = []
    for span in spans:
        if not LOOKS_LIKE_SDK.match(span):
            continue
        match = SDK_CITATION.fullmatch(span)
        if match is None:
            raise ValueError(f"malformed SDK citation `{span}`")
        if match["release"] not in releases():
            raise ValueError(f"`{span}` names no pytrio release")
        found.append(match)
    return found


def line_ranges(lines: str | None) -> list[tuple[int, int]]:
    ranges: list[tuple[int, int]] = []
    for part in lines.split(",") if lines else ():
        start, _, end = part.partition("-")
        ranges.append((int(start), int(end or start)))
    return ranges


def installed_file(path: str) -> Path:
    if path.startswith(f"pytrio-{INSTALLED}.dist-info/"):
        return SITE_PACKAGES / path
    return SITE_PACKAGES / "pytrio" / path


def problems(evidence: str) -> list[str]:
    """What is wrong with one rule's evidence (empty: nothing)."""
    try:
        found = entries(evidence)
    except ValueError as error:
        return [str(error)]
    if not found:
        return ["no evidence"]
    wrong = [
        f"private reference {found!r}"
        for found in private_references(evidence)
        if not SDK_POSITION.match(found)
    ]
    cited = 0
    for entry in found:
        try:
            citations = sdk_citations(entry)
        except ValueError as error:
            wrong.append(str(error))
            continue
        for repository_file in REPOSITORY_FILE.findall(entry):
            cited += 1
            if not (REPOSITORY / repository_file).is_file():
                wrong.append(f"{repository_file} does not exist")
        for citation in citations:
            cited += 1
            if releases()[citation["release"]] != INSTALLED:
                continue  # other releases are checked by hand against their wheels
            file = installed_file(citation["path"])
            if not file.is_file():
                wrong.append(f"{citation.group(0)}: no such file in pytrio {INSTALLED}")
                continue
            length = len(file.read_text(encoding="utf-8").splitlines())
            for start, end in line_ranges(citation["lines"]):
                if not 1 <= start <= end <= length:
                    wrong.append(f"{citation.group(0)}: {file.name} has {length} lines")
    if not cited:
        wrong.append("cites neither the SDK source nor a generated facts file")
    return wrong


def test_the_citations_are_checked_against_the_installed_release() -> None:
    # The 0.2.9 citations are read in the installed SDK: a new pin needs its own check.
    assert metadata.version("pytrio") == INSTALLED


@pytest.mark.parametrize("rule", RULES)
def test_rule_evidence_cites_the_sdk_in_the_documented_format(rule) -> None:
    assert problems(rule.evidence) == [], rule.code


def test_the_format_check_rejects_what_it_should() -> None:
    good = "- a claim (`029:client/sampling.py:55-63,204`, `013:lib/rest_client.py:15`)\n"
    assert problems(good) == []
    assert problems("") == ["no evidence"]
    assert problems("a claim (`029:client/sampling.py:55`)") != []  # not an entry
    assert problems("- a claim (029:client/sampling.py:55)") != []  # no backticks
    assert problems("- a claim (`999:client/sampling.py:55`)") != []  # no such release
    assert problems("- a claim (`029:client/sampling.py:55-`)") != []  # malformed lines
    assert problems("- a claim (`029:client/nothing.py:1`)") != []  # no such file
    assert problems("- a claim (`029:client/sampling.py:1-99999`)") != []  # past the end
    assert problems("- a claim (`029:client/sampling.py:9-3`)") != []  # reversed range
    assert problems("- see research/api-diff.md (`029:client/sampling.py:55`)") != []
    assert problems("- https://docs.python.org/3/ only") != []  # no SDK citation
    assert problems("- generated: `pytrio_facts/api_versions.json`") == []
    assert problems("- generated: `pytrio_facts/nothing.json`") != []
