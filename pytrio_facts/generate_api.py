"""Generate `pytrio_facts/api_versions.json`: the public API of every released pytrio.

Run by `make facts` (the only place that uses the network). For each release listed by
`pip index versions pytrio` it downloads the wheel with `pip download --no-deps` into a cache
(`~/.cache/pytrio-facts/wheels`, or `$PYTRIO_FACTS_CACHE`) and reads its sources with `ast`;
the SDK is never imported. What is kept per release:

- the names `pytrio`, `pytrio.types` (and, on 0.1, `pytrio.config`) expose;
- every public class reachable from them: bases, methods (sync and `_async`) with their
  parameters (kind, default present, `*args`/`**kwargs` catch-alls), return annotation and the
  kind of future the call returns, properties, instance attributes, pydantic fields and the
  model's `extra` setting (inherited members are flattened in);
- public functions (`pytrio.configure`) the same way;
- keyword renames between consecutive releases, paired only when the old and the new parameter
  carry the same docstring description (reviewed by hand: references/migration-0.1-to-0.2.md).

Entries that do not change between releases are stored once (`table`); each symbol lists, per
release, the index of its entry (or null where it does not exist).
"""

from __future__ import annotations

import argparse
import ast
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytrio_facts.api_model import version_key

OUT = Path(__file__).with_name("api_versions.json")
FORMAT = 1
# The modules whose names users reach: the package itself and its public `types` module.
PUBLIC_MODULES = ("pytrio", "pytrio.types")
PYDANTIC_BASES = {"BaseModel", "pydantic.BaseModel"}
_ARG_LINE = re.compile(r"^\s{4,}(\*{0,2}\w+)\s*(?:\([^)]*\))?:\s*(.*)$")


def _cache_dir() -> Path:
    root = os.environ.get("PYTRIO_FACTS_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "pytrio-facts" / "wheels"


def released_versions(project: str = "pytrio") -> list[str]:
    """Every release PyPI lists (`pip index versions pytrio`), oldest first."""
    out = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", project],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    match = re.search(r"Available versions:\s*(.+)", out)
    if match is None:
        raise SystemExit(f"could not read the release list from pip:\n{out}")
    versions = [v.strip() for v in match.group(1).split(",") if v.strip()]
    return sorted(versions, key=version_key)


def wheel_for(version: str, cache: Path, project: str = "pytrio") -> Path:
    cache.mkdir(parents=True, exist_ok=True)
    found = sorted(cache.glob(f"{project}-{version}-*.whl"))
    if found:
        return found[0]
    pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps"]
    subprocess.run([*pip, f"{project}=={version}", "-d", str(cache)], check=True)
    found = sorted(cache.glob(f"{project}-{version}-*.whl"))
    if not found:
        raise SystemExit(f"pip download gave no wheel for {project}=={version}")
    return found[0]


# ---- reading one wheel ------------------------------------------------------------------------


def read_modules(wheel: Path, package: str = "pytrio") -> dict[str, ast.Module]:
    """Module name -> parsed source, for every .py file of the package (`pytrio`; `tinker` for
    pytrio_facts/generate_tinker.py)."""
    modules: dict[str, ast.Module] = {}
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if not name.startswith(f"{package}/") or not name.endswith(".py"):
                continue
            dotted = name[: -len(".py")].replace("/", ".").removesuffix(".__init__")
            modules[dotted] = ast.parse(archive.read(name).decode("utf-8"), filename=name)
    return modules


def _is_package(modules: dict[str, ast.Module], name: str) -> bool:
    return any(other.startswith(name + ".") for other in modules)


@dataclass
class Resolved:
    """What a public name is: a class/function definition in a module, a module, or a value."""

    kind: str  # "class" | "function" | "module" | "value" ("import" before resolution)
    module: str
    node: ast.AST | None = None


@dataclass
class Wheel:
    version: str
    modules: dict[str, ast.Module]
    _raw: dict[str, dict[str, Resolved]] = field(default_factory=dict)
    package: str = "pytrio"  # imports from outside it are not followed

    def absolute(self, module: str, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        package = module if _is_package(self.modules, module) else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        return f"{package}.{node.module}" if node.module else package

    def raw(self, module: str) -> dict[str, Resolved]:
        """What a module's top level binds; imports stay unresolved (kind "import": `module`
        is the source module, `node` the imported name as an ast.Name)."""
        if module in self._raw:
            return self._raw[module]
        names: dict[str, Resolved] = {}
        tree = self.modules.get(module)
        for stmt in tree.body if tree is not None else ():
            for name, resolved in self._statement(module, stmt):
                names[name] = resolved
            if isinstance(stmt, ast.Delete):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        names.pop(target.id, None)
        self._raw[module] = names
        return names

    def _statement(self, module: str, stmt: ast.stmt) -> Iterator[tuple[str, Resolved]]:
        if isinstance(stmt, ast.ClassDef):
            yield stmt.name, Resolved("class", module, stmt)
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            yield stmt.name, Resolved("function", module, stmt)
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname and alias.name in self.modules:
                    yield alias.asname, Resolved("module", alias.name)
        elif isinstance(stmt, ast.ImportFrom):
            source = self.absolute(module, stmt)
            if not source.startswith(self.package):
                return
            for alias in stmt.names:
                local = alias.asname or alias.name
                yield local, Resolved("import", source, ast.Name(alias.name))
        elif isinstance(stmt, ast.Assign | ast.AnnAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    yield target.id, Resolved("value", module, stmt)
        elif isinstance(stmt, ast.If | ast.Try):
            for inner in (*stmt.body, *getattr(stmt, "orelse", ())):
                yield from self._statement(module, inner)

    def resolve(self, module: str, name: str) -> Resolved:
        """Follow imports to the definition of `module.name` (a submodule, class, function...)."""
        seen: set[tuple[str, str]] = set()
        while (module, name) not in seen:
            seen.add((module, name))
            submodule = f"{module}.{name}"
            if submodule in self.modules:
                return Resolved("module", submodule)
            found = self.raw(module).get(name)
            if found is None:
                return Resolved("value", module)
            if found.kind != "import":
                return found
            assert isinstance(found.node, ast.Name)
            module, name = found.module, found.node.id
        return Resolved("value", module)

    def bindings(self, module: str) -> dict[str, Resolved]:
        """Names a module binds at its top level, imports followed to their definition."""
        return {name: self.resolve(module, name) for name in self.raw(module)}

    def module_names(self, module: str) -> dict[str, Resolved]:
        names = {n: r for n, r in self.bindings(module).items() if not n.startswith("_")}
        # Subpackages are attributes of the package once anything imported them.
        prefix = module + "."
        for other in self.modules:
            if other.startswith(prefix):
                child = other[len(prefix) :].partition(".")[0]  # also namespace packages
                if not child.startswith("_"):
                    names.setdefault(child, Resolved("module", prefix + child))
        return names

    def module_aliases(self, module: str) -> dict[str, ast.expr]:
        """`APIFutureDict = APIFuture[dict[str, object]]`: module-level aliases for annotations."""
        aliases: dict[str, ast.expr] = {}
        for stmt in self.modules[module].body:
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and isinstance(stmt.value, ast.Subscript | ast.Name | ast.Attribute | ast.BinOp)
            ):
                aliases[stmt.targets[0].id] = stmt.value
            elif (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and stmt.value is not None
                and "TypeAlias" in ast.unparse(stmt.annotation)
            ):
                aliases[stmt.target.id] = stmt.value
        return aliases


# ---- describing definitions -------------------------------------------------------------------


def _decorators(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    found = set()
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        found.add(ast.unparse(target).rsplit(".", 1)[-1])
    return found


def _annotation(expr: ast.expr | None, aliases: dict[str, ast.expr]) -> str | None:
    if expr is None:
        return None
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        text = expr.value
        try:
            expr = ast.parse(text, mode="eval").body
        except SyntaxError:
            return text

    class _Expand(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            return aliases.get(node.id, node)

    return ast.unparse(_Expand().visit(ast.parse(ast.unparse(expr), mode="eval")).body)


def future_kind(returns: str | None, is_async: bool) -> str | None:
    """ "api" (pytrio APIFuture), "concurrent" (concurrent.futures.Future) or None, for what the
    call returns (for `async def`: what awaiting the coroutine gives)."""
    if returns is None:
        return None
    head = returns.split("[", 1)[0].strip().strip("'\"")
    if head.endswith("APIFuture"):
        return "api"
    if head.endswith(("ConcurrentFuture", "Future")):
        return "concurrent"
    del is_async
    return None


def signature(node: ast.FunctionDef | ast.AsyncFunctionDef, *, method: bool) -> list[str]:
    """Parameters in Python's own notation: `a`, `b=` (has a default), `/`, `*`, `*args`,
    `**kwargs`. The receiver (`self`/`cls`) of a method is dropped."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    defaults = [False] * (len(positional) - len(args.defaults)) + [True] * len(args.defaults)
    skip = 1 if method and "staticmethod" not in _decorators(node) and positional else 0
    out: list[str] = []
    for index, (arg, has_default) in enumerate(zip(positional, defaults, strict=True)):
        if index < skip:
            continue
        out.append(arg.arg + ("=" if has_default else ""))
        if args.posonlyargs and index == len(args.posonlyargs) - 1:
            out.append("/")
    if out and out[0] == "/":
        out.pop(0)
    if args.vararg is not None:
        out.append("*" + args.vararg.arg)
    elif args.kwonlyargs:
        out.append("*")
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        out.append(arg.arg + ("=" if default is not None else ""))
    if args.kwarg is not None:
        out.append("**" + args.kwarg.arg)
    return out


def _doc_section(doc: str | None, headers: tuple[str, ...]) -> dict[str, str]:
    """`Args:` / `Attributes:` entries of a Google-style docstring: name -> description."""
    if not doc:
        return {}
    entries: dict[str, str] = {}
    inside = False
    current: str | None = None
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped in headers:
            inside = True
            continue
        if (
            inside
            and stripped.endswith(":")
            and not line.startswith(" " * 8)
            and " " not in stripped
        ):
            inside = False
        if not inside:
            continue
        match = _ARG_LINE.match(line)
        indent = len(line) - len(line.lstrip())
        if match and indent <= 8:
            current = match.group(1).lstrip("*")
            entries[current] = match.group(2).strip()
        elif current is not None and stripped:
            entries[current] += " " + stripped
    return entries


def describe_function(
    node: ast.FunctionDef | ast.AsyncFunctionDef, aliases: dict[str, ast.expr], *, method: bool
) -> dict[str, Any]:
    returns = _annotation(node.returns, aliases)
    is_async = isinstance(node, ast.AsyncFunctionDef)
    entry: dict[str, Any] = {"k": "function", "params": signature(node, method=method)}
    if returns is not None:
        entry["returns"] = returns
    if is_async:
        entry["async"] = True
    if method:
        # Called on the class, not an instance (`TensorData.from_torch(t)` builds one).
        bound = _decorators(node) & {"classmethod", "staticmethod"}
        if bound:
            entry["binding"] = bound.pop()
    future = future_kind(returns, is_async)
    if future is not None:
        entry["future"] = future
    return entry


@dataclass
class ClassInfo:
    entry: dict[str, Any]
    docs: dict[str, dict[str, str]]  # member -> parameter/field docstring descriptions


class Describer:
    def __init__(self, wheel: Wheel) -> None:
        self.wheel = wheel
        self.classes: dict[tuple[str, str], ClassInfo] = {}
        self.pending: list[tuple[str, Resolved]] = []

    def base_of(self, module: str, expr: ast.expr) -> tuple[str, Resolved | None]:
        text = ast.unparse(expr)
        head = expr.value if isinstance(expr, ast.Subscript) else expr
        if isinstance(head, ast.Name):
            found = self.wheel.bindings(module).get(head.id)
            if found is not None and isinstance(found.node, ast.ClassDef):  # kind "class"
                return f"{found.module}.{found.node.name}", found
            for stmt in self.wheel.modules[module].body:
                if isinstance(stmt, ast.ImportFrom) and not stmt.level:
                    for alias in stmt.names:
                        if (alias.asname or alias.name) == head.id:
                            return f"{stmt.module}.{alias.name}", None
        return text, None

    def describe_class(self, resolved: Resolved) -> ClassInfo:
        node = resolved.node
        assert isinstance(node, ast.ClassDef)
        key = (resolved.module, node.name)
        if key in self.classes:
            return self.classes[key]
        aliases = self.wheel.module_aliases(resolved.module)
        bases: list[str] = []
        members: dict[str, Any] = {}
        properties: dict[str, str | None] = {}
        attributes: set[str] = set()
        fields: dict[str, list[Any]] = {}
        docs: dict[str, dict[str, str]] = {}
        external: set[str] = set()
        extra: str | None = None
        pydantic = False
        dataclass_like = any(
            ast.unparse(d).split("(")[0].rsplit(".", 1)[-1] == "dataclass"
            for d in node.decorator_list
        )
        for base in node.bases:
            name, found = self.base_of(resolved.module, base)
            bases.append(name)
            if found is not None:
                inherited = self.describe_class(found)
                members.update(inherited.entry.get("methods", {}))
                properties.update(inherited.entry.get("properties", {}))
                attributes.update(inherited.entry.get("attributes", []))
                fields.update({k: list(v) for k, v in inherited.entry.get("fields", {}).items()})
                docs.update(inherited.docs)
                external.update(inherited.entry.get("external", []))
                extra = inherited.entry.get("extra", extra)
                pydantic = pydantic or inherited.entry.get("pydantic", False)
                dataclass_like = dataclass_like or inherited.entry.get("dataclass", False)
            elif name.split("[", 1)[0] in ("pydantic.BaseModel", "BaseModel"):
                pydantic = True
                external.add("pydantic.BaseModel")
            elif name.split("[", 1)[0] in ("typing.Generic", "Generic", "object"):
                pass
            else:
                external.add(name.split("[", 1)[0])
        field_docs = _doc_section(ast.get_docstring(node), ("Attributes:",))
        for stmt in node.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                decorators = _decorators(stmt)
                public = not stmt.name.startswith("_") or stmt.name in ("__init__", "__call__")
                if not public:
                    continue
                if decorators & {"property", "cached_property"}:
                    properties[stmt.name] = _annotation(stmt.returns, aliases)
                elif "setter" in decorators or "deleter" in decorators:
                    continue
                else:
                    members[stmt.name] = describe_function(stmt, aliases, method=True)
                    described = _doc_section(ast.get_docstring(stmt), ("Args:", "Arguments:"))
                    if described:
                        docs[stmt.name] = described
                if stmt.name == "__init__":
                    for inner in ast.walk(stmt):
                        if (
                            isinstance(inner, ast.Attribute)
                            and isinstance(inner.ctx, ast.Store)
                            and isinstance(inner.value, ast.Name)
                            and inner.value.id == "self"
                            and not inner.attr.startswith("_")
                        ):
                            attributes.add(inner.attr)
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                name = stmt.target.id
                annotation = ast.unparse(stmt.annotation)
                if name == "model_config":
                    extra = _extra(stmt.value) or extra
                    continue
                if name.startswith("_") or annotation.startswith(("ClassVar", "typing.ClassVar")):
                    if not name.startswith("_"):
                        attributes.add(name)
                    continue
                if pydantic or dataclass_like:
                    fields[name] = [annotation, _has_default(stmt.value)]
                else:
                    attributes.add(name)
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        if target.id == "model_config":
                            extra = _extra(stmt.value) or extra
                        elif not target.id.startswith("_"):
                            attributes.add(target.id)
        if field_docs:
            docs["__fields__"] = field_docs
        entry: dict[str, Any] = {"k": "class", "bases": bases}
        if members:
            entry["methods"] = dict(sorted(members.items()))
        if properties:
            entry["properties"] = dict(sorted(properties.items()))
        if attributes:
            entry["attributes"] = sorted(attributes - set(members) - set(properties))
        if fields:
            entry["fields"] = fields
        if pydantic:
            entry["pydantic"] = True
        if dataclass_like:
            entry["dataclass"] = True
        if extra is not None:
            entry["extra"] = extra
        if external:
            entry["external"] = sorted(external)
        info = ClassInfo(entry, docs)
        self.classes[key] = info
        return info


def _extra(value: ast.expr | None) -> str | None:
    if isinstance(value, ast.Call):
        for kw in value.keywords:
            if kw.arg == "extra" and isinstance(kw.value, ast.Constant):
                return str(kw.value.value)
    if isinstance(value, ast.Dict):
        for key, item in zip(value.keys, value.values, strict=True):
            if (
                isinstance(key, ast.Constant)
                and key.value == "extra"
                and isinstance(item, ast.Constant)
            ):
                return str(item.value)
    return None


def _has_default(value: ast.expr | None) -> bool:
    if value is None:
        return False
    if isinstance(value, ast.Call) and ast.unparse(value.func).rsplit(".", 1)[-1] == "Field":
        if value.args:
            first = value.args[0]
            return not (isinstance(first, ast.Constant) and first.value is Ellipsis)
        return any(kw.arg in ("default", "default_factory") for kw in value.keywords)
    return True


# ---- one release --------------------------------------------------------------------------------


def describe_release(wheel: Wheel) -> tuple[dict[str, Any], dict[str, dict[str, dict[str, str]]]]:
    """Symbol -> entry for one release, and symbol -> member -> parameter docs (for renames)."""
    describer = Describer(wheel)
    symbols: dict[str, Any] = {}
    docs: dict[str, dict[str, dict[str, str]]] = {}
    modules = list(PUBLIC_MODULES)
    # 0.1's `pytrio/__init__.py` imports `config` (the `settings` object users set keys on).
    for name, resolved in wheel.module_names("pytrio").items():
        if resolved.kind == "module" and resolved.module not in modules:
            root_tree = wheel.modules["pytrio"]
            explicit = any(
                isinstance(stmt, ast.ImportFrom)
                and any((a.asname or a.name) == name for a in stmt.names)
                for stmt in root_tree.body
            )
            if explicit:
                modules.append(resolved.module)
    for module in modules:
        if module not in wheel.modules:
            continue
        names = wheel.module_names(module)
        symbols[module] = {
            "k": "module",
            "names": {name: resolved.kind for name, resolved in sorted(names.items())},
        }
        for name, resolved in names.items():
            qualname = f"{module}.{name}"
            if resolved.kind == "class":
                info = describer.describe_class(resolved)
                symbols[qualname] = info.entry
                if info.docs:
                    docs[qualname] = info.docs
            elif resolved.kind == "function":
                node = resolved.node
                assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                aliases = wheel.module_aliases(resolved.module)
                symbols[qualname] = describe_function(node, aliases, method=False)
                described = _doc_section(ast.get_docstring(node), ("Args:", "Arguments:"))
                if described:
                    docs[qualname] = {"__call__": described}
    return symbols, docs


def _param_names(params: list[str]) -> list[str]:
    return [p.lstrip("*").rstrip("=") for p in params if p not in ("/", "*")]


def derive_renames(
    versions: list[str],
    releases: dict[str, dict[str, Any]],
    docs: dict[str, dict[str, dict[str, dict[str, str]]]],
) -> dict[str, dict[str, dict[str, str]]]:
    """`symbol[.member]` -> release -> {old keyword: new keyword}, for keywords that disappeared
    in that release while a new one with the very same docstring description appeared."""
    renames: dict[str, dict[str, dict[str, str]]] = {}
    for previous, current in itertools.pairwise(versions):
        for symbol, entry in releases[current].items():
            old_entry = releases[previous].get(symbol)
            if old_entry is None or entry["k"] != old_entry["k"]:
                continue
            pairs: list[tuple[str, list[str], list[str], str]] = []
            if entry["k"] == "function":
                pairs.append((symbol, old_entry["params"], entry["params"], "__call__"))
            elif entry["k"] == "class":
                for member, method in entry.get("methods", {}).items():
                    old_method = old_entry.get("methods", {}).get(member)
                    if old_method is not None:
                        pairs.append(
                            (f"{symbol}.{member}", old_method["params"], method["params"], member)
                        )
                old_fields = list(old_entry.get("fields", {}))
                new_fields = list(entry.get("fields", {}))
                pairs.append((symbol, old_fields, new_fields, "__fields__"))
            for key, old_params, new_params, member in pairs:
                gone = [p for p in _param_names(old_params) if p not in _param_names(new_params)]
                added = [p for p in _param_names(new_params) if p not in _param_names(old_params)]
                if not gone or not added:
                    continue
                old_docs = docs[previous].get(symbol, {}).get(member, {})
                new_docs = docs[current].get(symbol, {}).get(member, {})
                found: dict[str, str] = {}
                for old in gone:
                    text = old_docs.get(old)
                    matches = [new for new in added if text and new_docs.get(new) == text]
                    same_text = [o for o in gone if old_docs.get(o) == text]
                    if len(matches) == 1 and len(same_text) == 1:
                        found[old] = matches[0]
                if found:
                    renames.setdefault(key, {})[current] = found
    return renames


# ---- the whole history --------------------------------------------------------------------------


def _canonical(entry: Any) -> str:
    return json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def build(versions: list[str], cache: Path) -> dict[str, Any]:
    releases: dict[str, dict[str, Any]] = {}
    docs: dict[str, dict[str, dict[str, dict[str, str]]]] = {}
    for version in versions:
        wheel = Wheel(version, read_modules(wheel_for(version, cache)))
        releases[version], docs[version] = describe_release(wheel)
    table: list[Any] = []
    index: dict[str, int] = {}

    def intern(entry: Any) -> int:
        key = _canonical(entry)
        if key not in index:
            index[key] = len(table)
            table.append(entry)
        return index[key]

    symbols: dict[str, list[int | None]] = {}
    for position, version in enumerate(versions):
        for symbol, entry in releases[version].items():
            if entry["k"] == "class":
                # Methods are shared between releases on their own (a class changes as a whole
                # when one method does; its unchanged methods do not).
                shared = dict(entry)
                if "methods" in shared:
                    shared["methods"] = {m: intern(f) for m, f in shared["methods"].items()}
                entry = shared  # noqa: PLW2901 - the class entry as stored
            row = symbols.setdefault(symbol, [None] * len(versions))
            row[position] = intern(entry)
    return {
        "format": FORMAT,
        "source": "pip download --no-deps pytrio==<version>; read with ast (make facts)",
        "versions": versions,
        "symbols": dict(sorted(symbols.items())),
        "table": table,
        "renames": derive_renames(versions, releases, docs),
    }


def write(data: dict[str, Any], path: Path = OUT) -> None:
    """Atomically replace the data file (one entry per line keeps diffs readable)."""
    lines = ["{"]
    head = {k: v for k, v in data.items() if k not in ("symbols", "table", "renames")}
    for key, value in head.items():
        lines.append(f"{json.dumps(key)}: {_canonical(value)},")
    for key in ("renames", "symbols"):
        lines.append(f"{json.dumps(key)}: {{")
        items = list(data[key].items())
        for i, (name, value) in enumerate(items):
            comma = "," if i < len(items) - 1 else ""
            lines.append(f"  {json.dumps(name)}: {_canonical(value)}{comma}")
        lines.append("},")
    lines.append('"table": [')
    for i, entry in enumerate(data["table"]):
        comma = "," if i < len(data["table"]) - 1 else ""
        lines.append(f"  {_canonical(entry)}{comma}")
    lines.append("]")
    lines.append("}")
    text = "\n".join(lines) + "\n"
    json.loads(text)  # never write something the loader cannot read
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=path.parent, delete=False, suffix=".tmp"
    ) as handle:
        handle.write(text)
    Path(handle.name).replace(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--versions", nargs="*", help="releases to read (default: all on PyPI)")
    parser.add_argument("--cache", type=Path, default=None, help="wheel cache directory")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    versions = sorted(args.versions or released_versions(), key=version_key)
    data = build(versions, args.cache or _cache_dir())
    write(data, args.out)
    size = args.out.stat().st_size
    print(
        f"{args.out}: {len(versions)} releases ({versions[0]} .. {versions[-1]}), "
        f"{len(data['symbols'])} symbols, {len(data['table'])} entries, {size} bytes"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
