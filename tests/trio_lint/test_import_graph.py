"""trio_lint's modules import each other without circles: every import counts, whether at module
level, under `TYPE_CHECKING` or inside a function (a deferred import still ties two modules)."""

from __future__ import annotations

import ast
from pathlib import Path

import trio_lint

PACKAGE = Path(trio_lint.__file__).parent


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
            for target in targets:
                # `from trio_lint import x` names the package, which is not a dependency on x's
                # siblings; a submodule wins over its package when both exist.
                if target in modules and target != name:
                    graph[name].add(target)
    for name, deps in graph.items():
        # `from trio_lint.rules import base` depends on trio_lint.rules.base; the package itself
        # only counts when nothing more specific was named.
        graph[name] = {d for d in deps if not any(o.startswith(d + ".") for o in deps)} or deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for dep in sorted(graph[node]):
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in on_stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_trio_lint_has_no_import_cycle() -> None:
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


# trio_lint/ itself holds the library API and the CLI entry; every other module sits in a
# stage folder (trio_lint/README.md).
TOP_LEVEL = {"__init__.py", "cli.py"}


def test_trio_lint_keeps_its_modules_in_stage_folders() -> None:
    assert {path.name for path in PACKAGE.glob("*.py")} <= TOP_LEVEL
