"""Resources: the skill's own docs (so an agent connected only through MCP can read them) and run
summaries of this session."""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    ListResourcesResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    TextResourceContents,
)

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


# Settings that are not limits (where things are, how the server runs): left out of the limits.
NOT_LIMITS = ("backend", "telemetry", "audit_log", "eager_backend", "local_data_dir", "ledger_file")


def budget_report(app: AppState) -> dict[str, object]:
    """What is left (`steps`, `tokens`, as before), the maxima, what is spent (kept across
    restarts) and what calls in progress hold."""
    b = app.budget
    left = b.left()
    return {
        "steps": left.steps,
        "tokens": left.tokens,
        "max_session_steps": b.max_steps,
        "max_session_tokens": b.max_tokens,
        "steps_used": b.steps_used,
        "tokens_used": b.tokens_used,
        "steps_held": b.steps_held,
        "tokens_held": b.tokens_held,
        "kept_in": app.ledger.where,
        "session": "everything trained on this backend's data since its ledger began: a "
        "restart keeps what was spent (ledger_file = 'memory': one server process)",
    }


def limits_report(app: AppState) -> dict[str, object]:
    """Every configured limit with its value, and what is left of those that are used up."""
    config = app.config
    limits = {
        name: config.model_dump(mode="json")[name]
        for name in type(config).model_fields
        if name not in NOT_LIMITS
    }
    open_runs = len(app.runs.runs)
    return {
        "limits": limits,
        "left": {
            "steps": app.budget.left().steps,
            "tokens": app.budget.left().tokens,
            "run_slots": max(0, config.max_concurrent_runs - open_runs - app.runs.opening),
        },
        "open_runs": list(app.runs.runs),
        "budget": budget_report(app),
        "descriptions": {
            name: field.description
            for name, field in type(config).model_fields.items()
            if name in limits
        },
    }


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
            "resumed_at_step": run.resumed_at_step,
            "idle_s": round(time.monotonic() - run.last_used, 1),
        }
        for run in app.runs.runs.values()
    ]


@dataclass(frozen=True)
class Document:
    uri: str
    name: str
    title: str | None
    description: str
    mime_type: str
    read: Callable[[], str]


def documents(app: AppState, root: Path | None = None) -> list[Document]:
    root = skill_root() if root is None else root
    found = [
        Document(
            uri=uri,
            name=path.relative_to(root).as_posix(),
            title=None,
            description="Part of the PyTRIO skill: how to write correct PyTRIO code.",
            mime_type="text/markdown",
            read=functools.partial(path.read_text, encoding="utf-8"),
        )
        for uri, path in skill_documents(root)
    ]
    found.append(
        Document(
            uri="trio-mcp://runs",
            name="runs",
            title="Training runs in this session",
            description="The runs opened or resumed in this session: step, last loss, checkpoints.",
            mime_type="application/json",
            read=lambda: json.dumps(run_summaries(app), indent=2),
        )
    )
    found.append(
        Document(
            uri="trio-mcp://budget",
            name="budget",
            title="Session budget left",
            description="Optimizer steps and trained tokens: the maxima, what is spent (kept "
            "across restarts), held by calls in progress, and left.",
            mime_type="application/json",
            read=lambda: json.dumps(budget_report(app), indent=2),
        )
    )
    found.append(
        Document(
            uri="trio-mcp://limits",
            name="limits",
            title="Configured limits",
            description="Every limit this server enforces (the settings a refusal names) and "
            "what is left: budget, run slots. Read it before planning a training session.",
            mime_type="application/json",
            read=lambda: json.dumps(limits_report(app), indent=2),
        )
    )
    return found


@dataclass
class ResourceTable:
    """The server's resources: `list_resources` and `read_resource` are its request handlers."""

    docs: list[Document]

    async def list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        return ListResourcesResult(
            resources=[
                Resource(
                    uri=d.uri,
                    name=d.name,
                    title=d.title,
                    description=d.description,
                    mime_type=d.mime_type,
                )
                for d in self.docs
            ]
        )

    async def read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: ReadResourceRequestParams
    ) -> ReadResourceResult:
        uri = str(params.uri)
        doc = next((d for d in self.docs if d.uri == uri), None)
        if doc is None:
            raise MCPError(
                code=INVALID_PARAMS,
                message=f"unknown resource {uri[:200]!r}; resources/list names them",
            )
        text = await anyio.to_thread.run_sync(doc.read)
        return ReadResourceResult(
            contents=[TextResourceContents(uri=uri, text=text, mime_type=doc.mime_type)]
        )
