"""trio_local's modules import each other without circles, and lower layers never import upper
ones. The graph and the cycle finder are trio_lint's own test's (one implementation)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import trio_local

GRAPH_TEST = Path(__file__).parents[1] / "trio_lint" / "test_import_graph.py"
# Lower layers first: a module may import its own layer or a lower one, never a higher one.
LAYERS = (
    ("trio_local.errors", "trio_local.config", "trio_local.catalogue"),
    ("trio_local.storage", "trio_local.protocol", "trio_local.security", "trio_local.tokenizers"),
    ("trio_local.engine", "trio_local.checks"),
    ("trio_local.scheduler", "trio_local.liveness"),
    ("trio_local.service",),  # the use cases (service/*.py) and Service (service/core.py)
    ("trio_local.http",),
    (
        "trio_local.background",
        "trio_local.cli",
        "trio_local.child",
        "trio_local.scratch",
        "trio_local.stats_cli",
    ),
    ("trio_local.launch", "trio_local"),
)


def _graph_tools():
    spec = importlib.util.spec_from_file_location("_trio_lint_import_graph", GRAPH_TEST)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.PACKAGE = Path(trio_local.__file__).parent  # the same walk over trio_local
    return module


def _layer(name: str) -> int:
    best, depth = -1, -1
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > depth:
                best, depth = index, len(prefix)
    assert best >= 0, f"{name} is in no layer: add it to LAYERS"
    return best


def test_trio_local_has_no_import_cycle() -> None:
    tools = _graph_tools()
    assert tools.cycles(tools.import_graph()) == []


def test_no_module_imports_a_higher_layer() -> None:
    graph = _graph_tools().import_graph()
    upward = sorted(
        f"{name} -> {dep}"
        for name, deps in graph.items()
        for dep in deps
        if _layer(dep) > _layer(name)
    )
    assert upward == []
