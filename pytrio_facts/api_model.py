"""The public API of every released pytrio, read from `api_versions.json`.

The data is generated from the released wheels by `pytrio_facts/generate_api.py` (`make facts`);
nothing here downloads or imports pytrio. Queries:

- `releases()`: every release, oldest first (trio-lint's `target-version` resolves against the
  same list: trio_lint/settings/target_version.py);
- `release("0.2.8").symbol("pytrio.configure")` -> a `Function`, `Class` or `Module`;
- `history(...)` -> on which releases a name (or a member of a class) exists, so a finding can
  say "removed in 0.2.9", "added in 0.2.4" or "renamed in 0.2.9";
- `renamed(symbol, name, version)` -> the keyword (or field) that replaced `name` in that release.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

DATA = Path(__file__).with_name("api_versions.json")
ParamKind = Literal[
    "positional_only", "positional_or_keyword", "var_positional", "keyword_only", "var_keyword"
]


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    kind: ParamKind
    has_default: bool


@dataclass(frozen=True, slots=True)
class Function:
    params: tuple[Param, ...]
    returns: str | None = None
    is_async: bool = False
    # "api": a pytrio APIFuture; "concurrent": a concurrent.futures.Future (what the call gives,
    # or for `async def`, what awaiting it gives).
    future: str | None = None
    # "classmethod" / "staticmethod" for methods called on the class; None: on an instance.
    binding: str | None = None

    # Derived from `params` once: the linter asks them for every call it resolves.
    keywords: frozenset[str] = field(init=False, repr=False, compare=False)
    """Names a caller may pass by keyword."""
    catch_all: Param | None = field(init=False, repr=False, compare=False)
    """The `**kwargs` parameter, if any."""
    max_positional: int | None = field(init=False, repr=False, compare=False)
    """How many positional arguments fit (None: `*args` takes any number)."""
    positional_names: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        positional = tuple(
            p.name for p in self.params if p.kind in ("positional_only", "positional_or_keyword")
        )
        keywords = frozenset(
            p.name for p in self.params if p.kind in ("positional_or_keyword", "keyword_only")
        )
        star = any(p.kind == "var_positional" for p in self.params)
        catch_all = next((p for p in self.params if p.kind == "var_keyword"), None)
        object.__setattr__(self, "keywords", keywords)
        object.__setattr__(self, "catch_all", catch_all)
        object.__setattr__(self, "max_positional", None if star else len(positional))
        object.__setattr__(self, "positional_names", positional)


@dataclass(frozen=True, slots=True)
class FieldInfo:
    name: str
    annotation: str
    has_default: bool


@dataclass(frozen=True, slots=True)
class Class:
    name: str
    bases: tuple[str, ...]
    methods: dict[str, Function]
    properties: frozenset[str]
    attributes: frozenset[str]
    fields: dict[str, FieldInfo]
    pydantic: bool
    dataclass: bool
    extra: str | None
    # Bases outside pytrio (`pydantic.BaseModel`, `Exception`): their members are not listed.
    external: tuple[str, ...]

    def has_member(self, name: str) -> bool:
        return (
            name in self.methods
            or name in self.properties
            or name in self.attributes
            or name in self.fields
        )

    @property
    def closed(self) -> bool:
        """True when every attribute of an instance is listed here: pytrio classes whose only
        outside base is pydantic's BaseModel (its own API is `PYDANTIC_MEMBERS`) or none."""
        return all(base in ("pydantic.BaseModel",) for base in self.external)

    def constructor(self) -> Function | None:
        """What `Class(...)` accepts: pydantic models and dataclasses take their fields (pydantic
        by keyword only), other classes their `__init__` (None when it is not known)."""
        if "__init__" in self.methods:
            return self.methods["__init__"]
        if self.pydantic:
            return Function(
                tuple(Param(f.name, "keyword_only", f.has_default) for f in self.fields.values())
            )
        if self.dataclass:
            return Function(
                tuple(
                    Param(f.name, "positional_or_keyword", f.has_default)
                    for f in self.fields.values()
                )
            )
        return None


@dataclass(frozen=True, slots=True)
class Module:
    name: str
    names: dict[str, str]  # public name -> "class" | "function" | "module" | "value"


Symbol = Function | Class | Module

# The public API pydantic's BaseModel gives every pytrio model (pydantic 2; v1 names kept too,
# they still work with a deprecation warning).
PYDANTIC_MEMBERS = frozenset(
    {
        "model_config",
        "model_fields",
        "model_computed_fields",
        "model_extra",
        "model_fields_set",
        "model_construct",
        "model_copy",
        "model_dump",
        "model_dump_json",
        "model_json_schema",
        "model_parametrized_name",
        "model_post_init",
        "model_rebuild",
        "model_validate",
        "model_validate_json",
        "model_validate_strings",
        "dict",
        "json",
        "copy",
        "parse_obj",
        "parse_raw",
        "parse_file",
        "from_orm",
        "construct",
        "schema",
        "schema_json",
        "validate",
        "update_forward_refs",
    }
)


def _param(text: str, keyword_only: bool, positional_only: bool) -> Param:
    if text.startswith("**"):
        return Param(text[2:], "var_keyword", False)
    if text.startswith("*"):
        return Param(text[1:], "var_positional", False)
    name = text.rstrip("=")
    kind: ParamKind = (
        "keyword_only"
        if keyword_only
        else "positional_only"
        if positional_only
        else "positional_or_keyword"
    )
    return Param(name, kind, text.endswith("="))


def _function(entry: dict[str, Any]) -> Function:
    raw: list[str] = entry["params"]
    positional_only = "/" in raw
    params: list[Param] = []
    keyword_only = False
    for text in raw:
        if text == "/":
            positional_only = False
            continue
        if text == "*":
            keyword_only = True
            continue
        param = _param(text, keyword_only, positional_only)
        if param.kind == "var_positional":
            keyword_only = True
        params.append(param)
    return Function(
        tuple(params),
        entry.get("returns"),
        entry.get("async", False),
        entry.get("future"),
        entry.get("binding"),
    )


class ApiData:
    """The parsed data file (load once with `api_data()`)."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self.versions: tuple[str, ...] = tuple(raw["versions"])
        self._symbols: dict[str, list[int | None]] = raw["symbols"]
        self._table: list[Any] = raw["table"]
        self.renames: dict[str, dict[str, dict[str, str]]] = raw["renames"]
        self._built: dict[tuple[str, int], Symbol] = {}

    def index(self, version: str) -> int:
        return self.versions.index(version)

    def symbol_names(self) -> list[str]:
        return list(self._symbols)

    def symbol(self, qualname: str, version: str) -> Symbol | None:
        row = self._symbols.get(qualname)
        if row is None:
            return None
        entry_id = row[self.index(version)]
        if entry_id is None:
            return None
        key = (qualname, entry_id)
        if key not in self._built:
            self._built[key] = self._build(qualname, self._table[entry_id])
        return self._built[key]

    def _build(self, qualname: str, entry: dict[str, Any]) -> Symbol:
        if entry["k"] == "function":
            return _function(entry)
        if entry["k"] == "module":
            return Module(qualname, dict(entry["names"]))
        return Class(
            name=qualname.rsplit(".", 1)[-1],
            bases=tuple(entry.get("bases", ())),
            methods={m: _function(self._table[i]) for m, i in entry.get("methods", {}).items()},
            properties=frozenset(entry.get("properties", {})),
            attributes=frozenset(entry.get("attributes", ())),
            fields={
                name: FieldInfo(name, annotation, has_default)
                for name, (annotation, has_default) in entry.get("fields", {}).items()
            },
            pydantic=entry.get("pydantic", False),
            dataclass=entry.get("dataclass", False),
            extra=entry.get("extra"),
            external=tuple(entry.get("external", ())),
        )

    def present(self, qualname: str, member: str | None = None, kind: str = "member") -> list[bool]:
        """Per release: does `qualname` (or its `member`) exist? `kind` narrows a member to
        "keyword" (of a function, or of a method `member` when given as "method:kw")."""
        out: list[bool] = []
        for version in self.versions:
            found = self.symbol(qualname, version)
            out.append(_has(found, member, kind))
        return out


def _has(found: Symbol | None, member: str | None, kind: str) -> bool:
    if found is None:
        return False
    if member is None:
        return True
    if kind == "keyword":
        method, _, keyword = member.rpartition(":")
        function: Function | None
        if isinstance(found, Class):
            function = found.methods.get(method) if method else found.constructor()
        else:
            function = found if isinstance(found, Function) else None
        return function is not None and keyword in function.keywords
    if isinstance(found, Module):
        return member in found.names
    if isinstance(found, Class):
        return found.has_member(member)
    return False


@cache
def api_data() -> ApiData:
    return ApiData(json.loads(DATA.read_text(encoding="utf-8")))


def releases() -> tuple[str, ...]:
    return api_data().versions


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))


@dataclass(frozen=True, slots=True)
class History:
    """Where a name stands on the target release, seen across all releases."""

    exists: bool
    removed_in: str | None = None  # the release that dropped it (it existed before the target)
    added_in: str | None = None  # the first release after the target that has it
    last_seen: str | None = None  # the last release before the target that had it

    @property
    def known(self) -> bool:
        return self.exists or self.removed_in is not None or self.added_in is not None


def history(present: list[bool], target: str, versions: tuple[str, ...] | None = None) -> History:
    versions = versions or releases()
    at = versions.index(target)
    if present[at]:
        return History(True)
    before = [i for i in range(at) if present[i]]
    after = [i for i in range(at + 1, len(versions)) if present[i]]
    if before:
        last = before[-1]
        return History(False, removed_in=versions[last + 1], last_seen=versions[last])
    if after:
        return History(False, added_in=versions[after[0]])
    return History(False)


def renamed(key: str, old: str, removed_in: str) -> str | None:
    """The keyword or field that replaced `old` in release `removed_in` (`key`: "pytrio.configure",
    "pytrio.types.Checkpoint" for fields, "pytrio.X.method" for a method's keywords)."""
    return api_data().renames.get(key, {}).get(removed_in, {}).get(old)


@dataclass(frozen=True, slots=True)
class Rename:
    """A keyword (or field) renamed one to one in `release` (paired by docstring, reviewed)."""

    symbol: str  # "pytrio.configure", "pytrio.types.Checkpoint", "pytrio.X.method"
    release: str
    old: str
    new: str


def renames() -> list[Rename]:
    out = [
        Rename(key, release, old, new)
        for key, by_release in api_data().renames.items()
        for release, pairs in by_release.items()
        for old, new in pairs.items()
    ]
    return sorted(out, key=lambda r: (version_key(r.release), r.symbol, r.old))


@dataclass(frozen=True, slots=True)
class ApiChange:
    """One public name, member or keyword that appeared or disappeared in `release`."""

    release: str
    change: Literal["added", "removed", "renamed"]
    what: str  # "`pytrio.configure(request_timeout_seconds=)`", "`TrainingClient.load_state()`"
    note: str = ""


def _members(found: Symbol | None) -> set[str]:
    """What a symbol offers callers, as shown in a changelog: `(kw=)`, `.m()`, `.m(kw=)`, `.f`.
    Constructors of the clients are the SDK's own business (users get clients from factories)."""
    if isinstance(found, Module):
        return {n for n, kind in found.names.items() if kind != "module"}
    if isinstance(found, Function):
        return {f"({k}=)" for k in found.keywords}
    if isinstance(found, Class):
        out = {f".{m}()" for m in found.methods if m != "__init__"}
        out |= {f".{p}" for p in (*found.properties, *found.attributes, *found.fields)}
        for name, method in found.methods.items():
            if name != "__init__":
                out |= {f".{name}({k}=)" for k in method.keywords}
        if found.pydantic:
            out |= {f"({k}=)" for k in found.fields}
        return out
    return set()


def _parts(name: str) -> tuple[str, str]:
    """`.m(kw=)` -> ("m", "kw"); `(kw=)` -> ("", "kw"); `.f` -> ("f", ""); `.m()` -> ("m", "")."""
    if name.endswith("=)"):
        head, _, keyword = name[:-2].rpartition("(")
        return head.lstrip("."), keyword
    return name.lstrip(".").removesuffix("()"), ""


def changes(since: str | None = None) -> list[ApiChange]:
    """What each release after `since` added, removed or renamed in the public API."""
    data = api_data()
    versions = data.versions
    start = versions.index(since) + 1 if since else 1
    names = set(data.symbol_names())
    renamed_pairs = {(r.release, r.symbol, r.old): r.new for r in renames()}
    new_names = {(r.release, r.symbol, r.new) for r in renames()}
    out: list[ApiChange] = []
    for index in range(max(start, 1), len(versions)):
        before, release = versions[index - 1], versions[index]
        for symbol in data.symbol_names():
            short = symbol.removeprefix("pytrio.types.")
            if symbol.startswith("pytrio.types.") and f"pytrio.{short}" in names:
                continue  # the same class as `pytrio.<name>`
            old, new = data.symbol(symbol, before), data.symbol(symbol, release)
            if isinstance(old, Module) or isinstance(new, Module):
                continue  # their classes and functions are symbols of their own
            if (old is None) != (new is None):
                out.append(ApiChange(release, "added" if old is None else "removed", f"`{short}`"))
                continue
            was, now = _members(old), _members(new)
            for name in sorted(was ^ now):
                member, keyword = _parts(name)
                whole = f".{member}()"
                if keyword and member and (whole in was) != (whole in now):
                    continue  # the method itself came or went
                key = f"{symbol}.{member}" if keyword and member else symbol
                bare = keyword or member
                if name in was:
                    new_name = renamed_pairs.get((release, key, bare))
                    if new_name is not None:
                        out.append(
                            ApiChange(release, "renamed", f"`{short}{name}`", f"now `{new_name}`")
                        )
                    else:
                        out.append(ApiChange(release, "removed", f"`{short}{name}`"))
                elif (release, key, bare) not in new_names:
                    out.append(ApiChange(release, "added", f"`{short}{name}`"))
    return out
