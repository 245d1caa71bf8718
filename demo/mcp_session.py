"""A scripted agent session: the official `mcp` client drives `trio-mcp` over stdio.

    .venv/bin/python demo/mcp_session.py

It creates a training run on the offline backend (trio-local), trains it on two question/answer
pairs, samples the trained answer, lints a snippet and plots the loss curve, printing every tool
call and its result the way an agent would see them.
"""

from __future__ import annotations

import base64
import json
import sys
import tempfile
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

TRIO_MCP = str(Path(sys.executable).with_name("trio-mcp"))
EXAMPLES = [
    {"prompt": "Q: What is the capital of France?\nA:", "completion": " Paris."},
    {"prompt": "Q: What colour is the sky?\nA:", "completion": " Blue."},
]


def show(value: object, limit: int = 400) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + " ..."


async def call(client: Client, tool: str, arguments: dict, **options: object) -> dict:
    print(f"\n-> {tool} {show(arguments, 200)}")
    result = await client.call_tool(tool, arguments, **options)
    if result.is_error:
        print(f"<- error: {result.content[0].text}")
        raise SystemExit(1)
    summary = {k: v for k, v in (result.structured_content or {}).items() if k != "backend_note"}
    print(f"<- {show(summary)}")
    return result


async def main() -> None:
    out = Path(tempfile.mkdtemp(prefix="trio-mcp-demo-"))
    params = StdioServerParameters(
        command=TRIO_MCP,
        args=[
            "--backend",
            "local",
            "--log-level",
            "WARNING",
            "--audit-log",
            str(out / "audit.jsonl"),
        ],
    )
    async with Client(params, read_timeout_seconds=900) as client:
        tools = await client.list_tools()
        print(f"trio-mcp serves {len(tools.tools)} tools: {', '.join(t.name for t in tools.tools)}")
        models = await call(client, "list_models", {})
        print(f"   ({models.structured_content['backend_note']})")
        run = await call(client, "create_training_run", {"rank": 16, "seed": 0})
        run_id = run.structured_content["run_id"]

        async def progress(done: float, total: float | None, message: str | None) -> None:
            print(f"   progress {message}")

        await call(
            client,
            "train_sft",
            {"run_id": run_id, "examples": EXAMPLES, "steps": 20, "learning_rate": 5e-3},
            progress_callback=progress,
        )
        await call(
            client,
            "sample",
            {"model": run_id, "prompt": EXAMPLES[0]["prompt"], "max_tokens": 8, "temperature": 0},
        )
        await call(
            client,
            "lint_code",
            {"source": "import pytrio as trio\np = trio.SamplingParams(max_new_tokens=8)\n"},
        )
        plot = await call(client, "plot_loss", {"run_id": run_id})
        image = next(c for c in plot.content if c.type == "image")
        png = out / "loss.png"
        png.write_bytes(base64.b64decode(image.data))
        print(f"\nloss curve written to {png}; audit log in {out / 'audit.jsonl'}")


if __name__ == "__main__":
    anyio.run(main)
