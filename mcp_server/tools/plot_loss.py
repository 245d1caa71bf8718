"""plot_loss: the loss curve of a run as a PNG (matplotlib, Agg backend, no display needed)."""

from __future__ import annotations

import base64
import io

import anyio
from mcp_types import CallToolResult, ImageContent, TextContent
from pydantic import Field

from mcp_server.app import AppState, BackendResult, ToolInput, backend_fields
from mcp_server.errors import InvalidInput
from mcp_server.spec import ToolCall, ToolSpec
from mcp_server.tools._common import RUN_ID, backend


class PlotLossInput(ToolInput):
    run_id: str = RUN_ID


class PlotLossOutput(BackendResult):
    run_id: str
    steps: int
    first_loss: float
    last_loss: float
    min_loss: float
    png_bytes: int = Field(description="Size of the PNG image returned as image content.")


def render_png(run_id: str, losses: list[float]) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6, 3.5), dpi=100)
    axes = figure.add_subplot()
    axes.plot(range(1, len(losses) + 1), losses, marker="o", markersize=3)
    axes.set_xlabel("step")
    axes.set_ylabel("loss per token")
    axes.set_title(f"run {run_id}"[:60])
    axes.grid(alpha=0.3)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


async def plot_loss(app: AppState, args: PlotLossInput, ctx: ToolCall) -> CallToolResult:
    run = app.runs.get(args.run_id)
    if not run.losses:
        raise InvalidInput(f"run {args.run_id} has no training steps yet; train it first")
    losses = list(run.losses)
    be = await backend(app)  # already running: the run was trained on it
    png = await anyio.to_thread.run_sync(render_png, run.run_id, losses)
    summary = PlotLossOutput(
        run_id=run.run_id,
        steps=len(losses),
        first_loss=losses[0],
        last_loss=losses[-1],
        min_loss=min(losses),
        png_bytes=len(png),
        **backend_fields(be),
    )
    return CallToolResult(
        content=[
            ImageContent(type="image", data=base64.b64encode(png).decode(), mime_type="image/png"),
            TextContent(type="text", text=summary.model_dump_json()),
        ],
        structured_content=summary.model_dump(mode="json"),
    )


SPEC = ToolSpec(
    name="plot_loss",
    title="Plot the loss curve",
    description="The per-token loss of every step of a run as a PNG image, plus a summary.",
    input_model=PlotLossInput,
    output_model=PlotLossOutput,
    handler=plot_loss,
    read_only=True,
    destructive=False,
    idempotent=True,
    open_world=False,
    run_field="run_id",
)
