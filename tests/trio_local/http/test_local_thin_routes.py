"""Routes parse, authenticate and render; what a request does is the service layer's
(trio_local/service/). No module under trio_local/http/ imports the service's parts or reaches
them through the Service object."""

from __future__ import annotations

import ast
from pathlib import Path

import trio_local

HTTP = Path(trio_local.__file__).parent / "http"
PARTS = ("engine", "scheduler", "storage", "liveness", "checks", "tokenizers")
# The Service's parts, as attributes: `state.store`, `service(request).engine`, ...
PART_ATTRIBUTES = {"store", "engine", "scheduler", "liveness", "checks", "tokenizers", "lock"}


def _is_service(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return node.id in {"state", "service"}
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Name) and node.func.id == "service"
    return isinstance(node, ast.Attribute) and node.attr == "service"


def test_routes_do_not_reach_into_the_service_parts() -> None:
    found = []
    for path in sorted(HTTP.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            where = f"{path.relative_to(HTTP.parent)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
                if any(name.startswith(f"trio_local.{part}") for name in names for part in PARTS):
                    found.append(f"{where} imports {node.module}")
            elif (
                isinstance(node, ast.Attribute)
                and node.attr in PART_ATTRIBUTES
                and _is_service(node.value)
            ):
                found.append(f"{where} uses the service's {node.attr}")
    assert found == []
