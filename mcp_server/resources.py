"""Resources: the skill's own docs (so an agent connected only through MCP can read them) and run
summaries of this session."""

from __future__ import annotations

import json
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resources import FileResource

from mcp_server.app import AppState

REPO_ROOT = Path(__file__).resolve().parents[1]
# A wheel has no repository root: it ships the skill's files in this package folder (setup.py).
PACKAGED_SKILL = Path(__file__).resolve().parent / "skill"
DOC_DIRS = ("references", "best-practices")


def skill_root() -> Path:
    """Where the skill's files are: inside the installed package, else the source checkout."""
    return PACKAGED_SKILL if (PACKAGED_SKILL / "SKILL.md").is_file() else REPO_ROOT


def skill_documents(root: Path | None = None) -> list[tuple[str, Path]]:
    """(uri, path) of SKILL.md and every Markdown file under references/ and best-practices/."""
    root = skill_root() if root is None else root
    found: list[tuple[str, Path]] = []
    skill = root / "SKILL.md"
    if skill.is_file():
        found.append(("skill://pytrio/SKILL.md", skill))
    for folder in DOC_DIRS:
        base = root / folder
        if base.is_dir():
            for path in sorted(base.rglob("*.md")):
                relative = path.relative_to(root).as_posix()
                found.append((f"skill://pytrio/{relative}", path))
    return found


def run_summaries(app: AppState) -> list[dict[str, object]]:
    return [
        {
            "run_id": run.run_id,
            "base_model": run.base_model,
            "rank": run.rank,
            "step": run.step,
            "last_loss": run.losses[-1] if run.losses else None,
            "tokens_trained": run.tokens_trained,
            "checkpoints": [c.path for c in run.checkpoints],
            "resumed_from": run.resumed_from,
        }
        for run in app.runs.runs.values()
    ]


def register_resources(server: MCPServer, app: AppState, root: Path | None = None) -> None:
    root = skill_root() if root is None else root
    for uri, path in skill_documents(root):
        server.add_resource(
            FileResource(
                uri=uri,
                name=path.relative_to(root).as_posix(),
                description="Part of the PyTRIO skill: how to write correct PyTRIO code.",
                mime_type="text/markdown",
                path=path,
            )
        )

    @server.resource(
        "trio-mcp://runs",
        name="runs",
        title="Training runs in this session",
        mime_type="application/json",
    )
    def runs() -> str:
        return json.dumps(run_summaries(app), indent=2)

    @server.resource(
        "trio-mcp://budget",
        name="budget",
        title="Session budget left",
        mime_type="application/json",
    )
    def budget() -> str:
        return app.budget.left().model_dump_json()
