"""mcp_server's layers: no import circle (every import counts, at module level, under
TYPE_CHECKING or inside a function), tools never import the layers that serve them, only the
`mcp` SDK's public API is used, and every numeric guard is one row of one table."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mcp_server
from mcp_server import guards
from mcp_server.config import Config
from mcp_server.errors import GuardRefusal

PACKAGE = Path(mcp_server.__file__).parent
# Above the tools: what builds the server from them and serves it.
SERVING = {"mcp_server.registry", "mcp_server.server", "mcp_server.transports", "mcp_server.cli"}


def _graph_helpers() -> ModuleType:
    """trio_lint's import-graph test, loaded as a private copy pointed at mcp_server: one graph
    builder and cycle finder for every package, not a copy per package."""
    path = Path(__file__).parents[1] / "trio_lint" / "test_import_graph.py"
    spec = importlib.util.spec_from_file_location("mcp_layers_import_graph", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.PACKAGE = PACKAGE
    return module


GRAPH = _graph_helpers()
import_graph, cycles, _module_name = GRAPH.import_graph, GRAPH.cycles, GRAPH._module_name


def imports_of(path: Path, name: str) -> set[str]:
    """Every module `path` names in an import (the SDK's too), relative imports resolved."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def test_mcp_server_has_no_import_cycle() -> None:
    graph = import_graph()
    assert "mcp_server.registry" in graph and "mcp_server.tools.train_sft" in graph
    assert cycles(graph) == []


def test_tools_never_import_the_layers_that_serve_them() -> None:
    graph = import_graph()
    tools = [name for name in graph if name.startswith("mcp_server.tools")]
    assert len(tools) > 10
    upward = {name: sorted(graph[name] & SERVING) for name in tools if graph[name] & SERVING}
    assert upward == {}


def test_only_the_mcp_sdks_public_api_is_used() -> None:
    """No private module or name of the SDK, and not MCPServer's machinery (its argument models,
    FuncMetadata, resolvers): tools are registered on the low-level `Server`."""
    private = []
    for path in PACKAGE.rglob("*.py"):
        name = _module_name(path)
        for target in imports_of(path, name):
            parts = target.split(".")
            if parts[0] not in ("mcp", "mcp_types"):
                continue
            if any(p.startswith("_") for p in parts) or target.startswith("mcp.server.mcpserver"):
                private.append(f"{name}: {target}")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in (
                "_lowlevel_server",
                "fn_metadata",
                "__signature__",
            ):
                private.append(f"{name}: .{node.attr}")
    assert private == []


def test_every_bound_is_a_setting_of_its_side() -> None:
    for setting in guards.BOUNDS:
        assert setting in Config.model_fields, setting
        assert setting.startswith(("max_", "min_")), setting


@settings(max_examples=60, deadline=None)
@given(
    setting=st.sampled_from(sorted(guards.BOUNDS)),
    offset=st.sampled_from([-2, -1, 0, 1, 2]),
)
def test_within_refuses_exactly_what_is_past_the_limit(setting: str, offset: int) -> None:
    config = Config()
    limit = getattr(config, setting)
    step = limit / 10 if isinstance(limit, float) else 1
    value = limit + offset * step
    past = value > limit if setting.startswith("max_") else value < limit
    if past:
        with pytest.raises(GuardRefusal, match=f"limit {setting} = ") as refused:
            guards.within(config, setting, value, index=0)
        assert refused.value.setting == setting
    else:
        guards.within(config, setting, value, index=0)
