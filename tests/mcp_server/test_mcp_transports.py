"""The real `trio-mcp` console script over stdio and over HTTP (bearer token, Host/Origin)."""

from __future__ import annotations

import httpx
import pytest
from mcp import Client

from mcp_server.tools import ALL_TOOLS
from tests.mcp_server.mcp_helpers import TOKEN, authorised_client, http_server, stdio_params

pytestmark = pytest.mark.anyio

NO_BACKEND = ("--set", "eager_backend=false")
SNIPPET = "import pytrio as trio\np = trio.SamplingParams(max_new_tokens=8)\n"


async def test_stdio_serves_tools_and_keeps_stdout_for_the_wire(tmp_path) -> None:
    params = stdio_params(*NO_BACKEND, "--audit-log", str(tmp_path / "a.jsonl"), cwd=tmp_path)
    async with Client(params) as client:
        tools = await client.list_tools()
        assert [t.name for t in tools.tools] == [spec.name for spec in ALL_TOOLS]
        refused = await client.call_tool("create_training_run", {"rank": 3})
        assert refused.is_error
        linted = await client.call_tool("lint_code", {"source": SNIPPET})
        assert not linted.is_error
        assert linted.structured_content["findings"][0]["code"] == "PTR201"
    assert (tmp_path / "a.jsonl").read_text().count("\n") == 2


async def test_stdio_reads_the_config_file_in_its_directory(tmp_path) -> None:
    (tmp_path / "trio-mcp.toml").write_text("read_only = true\n")
    params = stdio_params(*NO_BACKEND, "--audit-log", str(tmp_path / "a.jsonl"), cwd=tmp_path)
    async with Client(params) as client:
        result = await client.call_tool("create_training_run", {})
    assert result.is_error and "read_only" in result.content[0].text


def test_bad_config_exits_with_a_message(tmp_path) -> None:
    import subprocess

    from tests.mcp_server.mcp_helpers import TRIO_MCP

    (tmp_path / "trio-mcp.toml").write_text("max_rank = 'lots'\n")
    done = subprocess.run(
        [TRIO_MCP], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2
    assert "max_rank" in done.stderr and done.stdout == ""


async def test_http_requires_the_token_and_checks_host_and_origin(tmp_path) -> None:
    audit = str(tmp_path / "a.jsonl")
    with http_server(*NO_BACKEND, "--audit-log", audit, cwd=tmp_path) as (url, log):
        body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        headers = {"Accept": "application/json, text/event-stream"}
        async with httpx.AsyncClient() as http:
            anonymous = await http.post(url, json=body, headers=headers)
            wrong = await http.post(
                url, json=body, headers={**headers, "Authorization": "Bearer nope"}
            )
            auth = {**headers, "Authorization": f"Bearer {TOKEN}"}
            rebound = await http.post(url, json=body, headers={**auth, "Host": "evil.example"})
            cross = await http.post(
                url, json=body, headers={**auth, "Origin": "http://evil.example"}
            )
        assert anonymous.status_code == 401 and wrong.status_code == 401
        assert rebound.status_code == 421
        assert cross.status_code == 403
        async with authorised_client(url) as client:
            result = await client.call_tool("lint_code", {"source": SNIPPET, "fix": True})
            assert not result.is_error
            assert "max_tokens=8" in result.structured_content["fixed_source"]
    assert TOKEN not in log.read_text()
