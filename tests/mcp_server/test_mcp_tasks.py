"""Long calls as MCP tasks (2025-11-25) on the real console script, in raw JSON-RPC (mcp
2.3.0's client sends no task-augmented requests): a task-augmented call is answered at once and
its result fetched later, over stdio and streamable HTTP; train_sft as a task reports progress
and, cancelled, stops and charges exactly the steps the backend took; a tool that may ask the
user is never a task."""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from pathlib import Path

import pytest

from tests.mcp_server.mcp_helpers import TOKEN, TRIO_MCP, http_server

pytestmark = pytest.mark.slow

NO_BACKEND = ("--set", "eager_backend=false")


class Raw:
    """A JSON-RPC peer on a trio-mcp process's stdio."""

    def __init__(self, tmp_path: Path) -> None:
        self.audit = tmp_path / "audit.jsonl"
        args = [TRIO_MCP, "--backend", "local", "--audit-log", str(self.audit)]
        args += ["--set", "local_data_dir=temporary"]
        self.process = subprocess.Popen(
            args,
            cwd=tmp_path,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={k: v for k, v in os.environ.items() if k != "PYTRIO_API_KEY"},
        )
        self.buffer = b""
        self.next_id = 0

    def send(self, method: str, params: dict | None = None) -> int:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()
        return self.next_id

    def read(self, timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            assert time.monotonic() < deadline, "no message in time"
            ready, _, _ = select.select([self.process.stdout], [], [], 0.2)
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 1 << 16)
                assert chunk, "the server closed stdout"
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def reply(self, request_id: int, timeout: float = 60) -> dict:
        while True:
            message = self.read(timeout)
            if message.get("id") == request_id:
                return message

    def call(self, method: str, params: dict | None = None) -> dict:
        return self.reply(self.send(method, params))

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


def test_long_calls_run_as_tasks_with_progress_and_cancellation(tmp_path) -> None:
    peer = Raw(tmp_path)
    try:
        started = peer.call(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        )
        tasks = started["result"]["capabilities"]["tasks"]
        assert tasks["requests"]["tools"]["call"] == {} and "cancel" in tasks
        peer.process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        tools = {t["name"]: t for t in peer.call("tools/list")["result"]["tools"]}
        assert tools["train_sft"]["execution"] == {"taskSupport": "optional"}
        assert tools["delete_checkpoint"]["execution"] == {"taskSupport": "forbidden"}

        # A task-augmented call answers at once; its result is the plain call's.
        lint = {"name": "lint_code", "arguments": {"source": "import pytrio\n"}}
        task = peer.call("tools/call", {**lint, "task": {"ttl": 60_000}})["result"]["task"]
        assert task["status"] == "working" and task["ttl"] == 60_000
        payload = peer.call("tasks/result", {"taskId": task["taskId"]})["result"]
        plain = peer.call("tools/call", lint)["result"]
        assert payload["structuredContent"] == plain["structuredContent"]
        assert payload["_meta"]["io.modelcontextprotocol/related-task"]["taskId"] == task["taskId"]
        listed = peer.call("tasks/list", {})["result"]["tasks"]
        assert [(t["taskId"], t["status"]) for t in listed] == [(task["taskId"], "completed")]

        # A tool that may ask the user is never a task: it answers as a plain call.
        confirm = {"checkpoint": "trio://r/weights/x"}
        asked = peer.call(
            "tools/call",
            {"name": "delete_checkpoint", "arguments": confirm, "task": {"ttl": 1000}},
        )["result"]
        assert "task" not in asked and asked["isError"] is True

        created = peer.call(
            "tools/call", {"name": "create_training_run", "arguments": {"rank": 8}}
        )["result"]
        run = created["structuredContent"]["run_id"]
        examples = [{"prompt": "Q: a?\nA:", "completion": " b."}]
        task = peer.call(
            "tools/call",
            {
                "name": "train_sft",
                "arguments": {"run_id": run, "examples": examples, "steps": 60},
                "task": {"ttl": 60_000},
                "_meta": {"progressToken": "sft"},
            },
        )["result"]["task"]
        progress = []
        while len(progress) < 2:
            message = peer.read()
            if message.get("method") == "notifications/progress":
                assert message["params"]["progressToken"] == "sft"
                progress.append(message["params"]["progress"])
        assert progress == [1, 2]
        cancelled = peer.call("tasks/cancel", {"taskId": task["taskId"]})["result"]
        assert cancelled["status"] == "cancelled"
        gone = peer.call("tasks/result", {"taskId": task["taskId"]})
        assert "cancelled" in gone["error"]["message"]

        # The work stopped, and what ran is charged exactly.
        step = peer.call("tools/call", {"name": "get_training_run", "arguments": {"run_id": run}})[
            "result"
        ]["structuredContent"]["step"]
        budget = peer.call("resources/read", {"uri": "trio-mcp://budget"})["result"]
        spent = json.loads(budget["contents"][0]["text"])["steps_used"]
        assert 2 <= step < 60 and spent == step
        assert "unknown task" in peer.call("tasks/get", {"taskId": "nope"})["error"]["message"]
    finally:
        peer.close()
    outcomes = [json.loads(line) for line in peer.audit.read_text().splitlines()]
    assert ("train_sft", "cancelled") in [(o["tool"], o["outcome"]) for o in outcomes]


def _sse_or_json(response) -> dict:
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
        return json.loads([d for d in data if d.strip()][-1])
    return response.json()


def test_a_task_over_streamable_http(tmp_path) -> None:
    import httpx

    with http_server(*NO_BACKEND, "--audit-log", str(tmp_path / "a.jsonl"), cwd=tmp_path) as (
        url,
        _,
    ):
        headers = {
            "Authorization": f"Bearer {TOKEN}",
            "Accept": "application/json, text/event-stream",
        }
        with httpx.Client(headers=headers, timeout=30) as http:

            def post(message: dict, session: dict) -> dict:
                response = http.post(url, json=message, headers=session)
                assert response.status_code in (200, 202), response.text
                return _sse_or_json(response) if "id" in message else {}

            hello = {"protocolVersion": "2025-11-25", "capabilities": {}}
            hello["clientInfo"] = {"name": "raw", "version": "0"}
            first = http.post(
                url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}
            )
            session = {"mcp-session-id": first.headers["mcp-session-id"]}
            session["mcp-protocol-version"] = "2025-11-25"
            post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
            lint = {"name": "lint_code", "arguments": {"source": "x = 1\n"}, "task": {}}
            created = post(
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": lint}, session
            )
            task_id = created["result"]["task"]["taskId"]
            done = post(
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "tasks/result",
                    "params": {"taskId": task_id},
                },
                session,
            )
            assert done["result"]["structuredContent"]["summary"] == "no findings"
            got = post(
                {"jsonrpc": "2.0", "id": 4, "method": "tasks/get", "params": {"taskId": task_id}},
                session,
            )
            assert got["result"]["status"] == "completed"
