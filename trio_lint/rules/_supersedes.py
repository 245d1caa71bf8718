"""Precedence between checkers, read from `Rule.supersedes` in one place (`supersession()`).

A rule that reports a mistake another checker would also see says so in its `supersedes`
(`rules/base.py`), so one mistake gets one finding; the checker that would report it too asks
this module before it does:

- `"pytrio.types.SampleResponse.samples"`: an attribute or method of an SDK class
  (`attribute(symbol, name)`);
- `"pytrio.SamplingParams(max_new_tokens=)"`: a keyword of an SDK callee (`keyword(symbol, name)`);
- `base.RESPONSE_ON_FUTURE` / `base.FUTURE_API_ISSUE`: the members read on a future, claimed as
  a class of members rather than one by one (`future_member(...)`): which of a response's
  members a future holds, or which members the API data flags on the future itself, depends
  on the future read, not on a name the rule could list.

Not a rule module (the registry skips names that start with `_`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from trio_lint.rules import all_rules
from trio_lint.rules.base import FUTURE_API_ISSUE, FUTURE_MEMBERS, RESPONSE_ON_FUTURE


@dataclass(frozen=True, slots=True)
class Supersession:
    """Every rule's `supersedes`, by what it names: the codes claiming each."""

    attributes: dict[str, dict[str, tuple[str, ...]]]  # class symbol -> member -> codes
    keywords: dict[tuple[str, str], tuple[str, ...]]  # (callee symbol, keyword) -> codes
    future_members: dict[str, tuple[str, ...]]  # RESPONSE_ON_FUTURE / FUTURE_API_ISSUE -> codes

    def attribute(self, symbol: str, name: str) -> bool:
        """Another rule reports `name` read on an instance of the SDK class `symbol`."""
        return name in self.attributes.get(symbol, ())

    def keyword(self, symbol: str, name: str) -> bool:
        """Another rule reports the keyword `name` of a call of the SDK callee `symbol`."""
        return (symbol, name) in self.keywords

    def future_member(self, entry: str) -> bool:
        """Some rule claims that class of members read on a future (`RESPONSE_ON_FUTURE`: the
        response's members, PTR101 missing-result's; `FUTURE_API_ISSUE`: the members the API
        data flags on the future itself, the conformance codes')."""
        return entry in self.future_members


@cache
def supersession() -> Supersession:
    """The one reading of every rule's `supersedes` (the rules are fixed for the process)."""
    attributes: dict[str, dict[str, list[str]]] = {}
    keywords: dict[tuple[str, str], list[str]] = {}
    future_members: dict[str, list[str]] = {}
    for rule in all_rules():
        for member in sorted(rule.supersedes):
            if member in FUTURE_MEMBERS:
                future_members.setdefault(member, []).append(rule.code)
            elif member.endswith("=)"):
                symbol, _, keyword = member[:-2].partition("(")
                keywords.setdefault((symbol, keyword), []).append(rule.code)
            else:
                symbol, _, name = member.rpartition(".")
                attributes.setdefault(symbol, {}).setdefault(name, []).append(rule.code)
    return Supersession(
        {symbol: {k: tuple(v) for k, v in names.items()} for symbol, names in attributes.items()},
        {k: tuple(v) for k, v in keywords.items()},
        {k: tuple(v) for k, v in future_members.items()},
    )


__all__ = ["FUTURE_API_ISSUE", "RESPONSE_ON_FUTURE", "Supersession", "supersession"]
