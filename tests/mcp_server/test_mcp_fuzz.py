"""Property-based fuzzing of every tool: generated hostile arguments (wrong types, huge and
non-finite numbers, control characters, path tricks, unknown keys, deep nesting) through the
official in-memory client. (A client cannot even encode a lone surrogate; the stdio test in
test_mcp_hardening.py sends one raw.)

Each call must end as a result (an error naming what is wrong, or a success), never as a crash
of the session; a registered secret never comes back; the server answers afterwards; nothing is
written outside the test's own directory. The backend is "remote" without a key, so a call that
passes every check fails fast with a clear message instead of starting a service.
"""

from __future__ import annotations

import math
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from mcp_server.config import Config
from mcp_server.redact import remember_secret
from mcp_server.server import build_server
from mcp_server.tools import ALL_TOOLS

SECRET = "sk-fuzz-0123456789abcdef-SECRET"

_text = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        [
            "",
            "../../etc/passwd",
            "x/../..",
            "/abs/path",
            "trio://r/../../x",
            "name\n",
            "-rf",
            "a\x00b",
            "\u202e",
            SECRET,
            f"Bearer {SECRET}",
            "x" * 5000,
            "Qwen/Qwen3-4B-Instruct-2507",
            "cross_entropy",
            "step-1",
        ]
    ),
)
_number = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([math.nan, math.inf, -math.inf, 0.0, -0.0, 1e308, -1.0, 2**64 - 1]),
    st.floats(allow_nan=True, allow_infinity=True),
)
_scalar = st.one_of(st.none(), st.booleans(), _number, _text)
_value = st.recursive(
    _scalar,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_text, inner, max_size=4)),
    max_leaves=12,
)


def _arguments(spec) -> st.SearchStrategy[dict]:
    names = list(spec.input_model.model_fields)
    keys = st.one_of(st.sampled_from(names), _text) if names else _text
    return st.dictionaries(keys, _value, max_size=len(names) + 2)


@pytest.fixture(scope="module")
def fuzz_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def _files(root: Path) -> set[Path]:
    return set(root.rglob("*"))


@pytest.mark.parametrize("spec", ALL_TOOLS, ids=lambda spec: spec.name)
def test_hostile_arguments_end_as_results(spec, fuzz_root, monkeypatch) -> None:
    monkeypatch.delenv("PYTRIO_API_KEY", raising=False)
    monkeypatch.setenv("HOME", str(fuzz_root / "home"))  # no `trio login` profile
    monkeypatch.chdir(fuzz_root)
    remember_secret(SECRET)
    config = Config(backend="remote", eager_backend=False, audit_log=fuzz_root / "audit.jsonl")
    server, app = build_server(config)
    before = _files(fuzz_root)
    seen = {"calls": 0}

    @settings(
        max_examples=60,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(arguments=_arguments(spec))
    def check(arguments: dict) -> None:
        async def session() -> None:
            async with Client(server) as client:
                result = await client.call_tool(spec.name, arguments)
                text = " ".join(getattr(c, "text", "") for c in result.content)
                assert SECRET not in text
                if result.is_error:
                    assert text.strip(), "an error must say what is wrong"
                alive = await client.call_tool("list_models", {})
                assert alive.is_error  # no key: a clear refusal, and the server still answers
                assert "API key" in " ".join(getattr(c, "text", "") for c in alive.content)

        anyio.run(session)
        seen["calls"] += 1

    check()
    app.close()
    assert seen["calls"] >= 60
    created = _files(fuzz_root) - before
    assert created <= {fuzz_root / "audit.jsonl"}, sorted(map(str, created))
    assert SECRET not in (fuzz_root / "audit.jsonl").read_text()
