"""Per-run serialisation, backend choice, secret redaction and lazy imports."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client
from pydantic import BaseModel, Field

from mcp_server.app import ToolInput
from mcp_server.backend import choose_backend, configured_api_key
from mcp_server.budget import Budget
from mcp_server.config import Config
from mcp_server.errors import BackendFailure, GuardRefusal
from mcp_server.redact import redact, remember_secret
from mcp_server.server import build_server
from mcp_server.spec import ToolSpec


class SlowInput(ToolInput):
    run_id: str = Field(description="Which run to hold.")


class SlowOutput(BaseModel):
    started: float
    ended: float


async def _hold(app, args: SlowInput, ctx) -> SlowOutput:
    started = time.perf_counter()
    await anyio.sleep(0.3)
    return SlowOutput(started=started, ended=time.perf_counter())


HOLD = ToolSpec(
    name="hold",
    title="Hold a run",
    description="Holds the run's lock for 0.3 s.",
    input_model=SlowInput,
    output_model=SlowOutput,
    handler=_hold,
    read_only=True,
    destructive=False,
    idempotent=True,
    open_world=False,
    run_field="run_id",
)


async def _intervals(run_ids: list[str], tmp_path: Path) -> list[tuple[float, float]]:
    config = Config(eager_backend=False, audit_log=tmp_path / "audit.jsonl")
    server, app = build_server(config, extra_tools=[HOLD])
    spans: list[tuple[float, float]] = []
    async with Client(server) as client:

        async def one(run_id: str) -> None:
            result = await client.call_tool("hold", {"run_id": run_id})
            spans.append((result.structured_content["started"], result.structured_content["ended"]))

        async with anyio.create_task_group() as group:
            for run_id in run_ids:
                group.start_soon(one, run_id)
    app.close()
    return sorted(spans)


@pytest.mark.anyio
async def test_calls_on_one_run_are_serialised(tmp_path) -> None:
    (_, a_end), (b_start, _) = await _intervals(["run-a", "run-a"], tmp_path)
    assert b_start >= a_end


@pytest.mark.anyio
async def test_calls_on_different_runs_run_in_parallel(tmp_path) -> None:
    (_, a_end), (b_start, _) = await _intervals(["run-a", "run-b"], tmp_path)
    assert b_start < a_end


@pytest.fixture
def no_key(monkeypatch, tmp_path):
    monkeypatch.delenv("PYTRIO_API_KEY", raising=False)
    monkeypatch.delenv("PYTRIO_ENV", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path / ".pytrio"


def test_without_a_key_the_backend_is_local(no_key) -> None:
    assert configured_api_key() is None
    assert choose_backend(Config(backend="auto")) == "local"
    with pytest.raises(BackendFailure, match="needs an API key"):
        choose_backend(Config(backend="remote"))


def test_a_key_in_the_environment_or_config_selects_the_service(no_key, monkeypatch) -> None:
    monkeypatch.setenv("PYTRIO_API_KEY", "key-from-env-123")
    assert choose_backend(Config(backend="auto")) == "remote"
    assert choose_backend(Config(backend="local")) == "local"
    monkeypatch.delenv("PYTRIO_API_KEY")
    no_key.mkdir()
    (no_key / "config.toml").write_text('api_key = "key-from-file-123"\n')
    assert configured_api_key() == "key-from-file-123"
    assert choose_backend(Config(backend="auto")) == "remote"


def test_a_named_profile_is_found_like_the_sdk_finds_it(no_key, monkeypatch) -> None:
    (no_key / "envs" / "work").mkdir(parents=True)
    (no_key / "envs" / "work" / "config.toml").write_text('api_key = "key-from-profile-1"\n')
    (no_key / "env.toml").write_text('active_env = "work"\n')
    assert configured_api_key() == "key-from-profile-1"
    monkeypatch.setenv("PYTRIO_ENV", "default")
    assert configured_api_key() is None


def test_secrets_are_redacted_from_messages() -> None:
    remember_secret("sk-registered-secret-value")
    text = redact(
        "failed with sk-registered-secret-value; Authorization: Bearer abcdefghijkl; "
        "api_key=zzzzzzzzzz"
    )
    assert text == ("failed with [redacted]; Authorization: Bearer [redacted]; api_key=[redacted]")


def test_budget_refuses_what_would_not_fit() -> None:
    budget = Budget(max_steps=10, max_tokens=1000)
    with budget.reserve(10, 1000) as hold:
        hold.spend(4, 100)
        assert budget.left().model_dump() == {"steps": 0, "tokens": 0}
    assert budget.left().model_dump() == {"steps": 6, "tokens": 900}
    with pytest.raises(GuardRefusal, match="max_session_steps"):
        budget.reserve(7, 10)
    with pytest.raises(GuardRefusal, match="max_session_tokens"):
        budget.reserve(1, 901)
    assert budget.left().model_dump() == {"steps": 6, "tokens": 900}


def test_starting_the_server_imports_no_heavy_module() -> None:
    code = (
        "import sys, mcp_server.cli\n"
        "from mcp_server.server import build_server\n"
        "from mcp_server.config import Config\n"
        "build_server(Config(eager_backend=False))\n"
        "heavy = ('torch', 'transformers', 'pytrio', 'trio_local', 'matplotlib', 'trio_lint')\n"
        "print(','.join(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == ""
