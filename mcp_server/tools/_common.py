"""Helpers the tools share: awaiting SDK futures, tokenizers, and small result models."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from typing import Any

import anyio
from pydantic import BaseModel, Field

from mcp_server.app import AppState
from mcp_server.backend import Backend, call_sdk, sdk_message
from mcp_server.errors import BackendFailure
from mcp_server.runs import RunState

# Identifiers are opaque strings from the backend. Each '/'-separated segment starts with a
# letter, digit or '_' (so no segment is '.' or '..', and nothing poses as an option), and holds
# no whitespace or control character. A run id is one segment: it becomes part of REST URLs.
# Pydantic matches these with Rust's regex engine, where `$` is the end of the text only.
_SEGMENT = r"[A-Za-z0-9_][A-Za-z0-9_.:@+=-]*"
RUN_ID_PATTERN = rf"^{_SEGMENT}$"
# Checkpoint paths (`trio://<run>/weights/<name>`), run ids and model ids (`Org/Name`).
ID_PATTERN = rf"^(?:[a-z][a-z0-9+.-]*://)?{_SEGMENT}(?:/{_SEGMENT})*$"
RUN_ID = Field(
    min_length=1,
    max_length=200,
    pattern=RUN_ID_PATTERN,
    description="A run id from create_training_run.",
)


def optional_run_id(description: str) -> Any:
    """An optional run id argument, with the same bounds as RUN_ID."""
    return Field(
        None, min_length=1, max_length=200, pattern=RUN_ID_PATTERN, description=description
    )


CHECKPOINT = Field(
    min_length=1,
    max_length=1000,
    pattern=ID_PATTERN,
    description="A checkpoint path as returned by save_checkpoint or list_checkpoints.",
)


async def backend(app: AppState) -> Backend:
    return await app.backend.get()


# How long a cancelled call still waits for the steps it already submitted, so it can count
# them (a tiny local step takes well under a second; a stuck backend must not hold a cancel).
SETTLE_S = 10.0


async def sdk(what: str, awaitable: Any) -> Any:
    """Await an SDK coroutine or future; its errors come back as `BackendFailure`.

    A future is waited for in a worker thread, never awaited directly: pytrio 0.2.9's
    `APIFuture.__await__` wraps it with `asyncio.wrap_future`, so a cancelled call would cancel
    the SDK's own future and lose the result of work the backend does anyway.
    """
    import pytrio as trio

    try:
        if isinstance(awaitable, trio.types.APIFuture):
            return await anyio.to_thread.run_sync(awaitable.result, abandon_on_cancel=True)
        return await awaitable
    except BackendFailure:
        raise
    except Exception as exc:
        raise BackendFailure(f"{what} failed: {sdk_message(exc)}") from None


async def submit(what: str, coroutine: Any) -> Any:
    """Submit one SDK event without letting a cancel cut the submission in half.

    The SDK runs the submission on its own loop and cancels it when the awaiting task is
    cancelled; an event half sent is an uncertain submit, after which pytrio 0.2.9 refuses every
    later call on that client. Submitting takes one request, so it is finished first.
    """
    with anyio.CancelScope(shield=True):
        return await sdk(what, coroutine)


async def settled(what: str, future: Any, on_cancel: Callable[[Any], None]) -> Any:
    """The result of a submitted event. If the call is cancelled meanwhile, the event still
    happens on the backend: wait for it (shielded, at most SETTLE_S), hand its result to
    `on_cancel` so the session records it, then let the cancel go on."""
    try:
        return await sdk(what, future)
    except anyio.get_cancelled_exc_class():
        with (
            anyio.CancelScope(shield=True),
            anyio.move_on_after(SETTLE_S),
            contextlib.suppress(BackendFailure),
        ):
            on_cancel(await sdk(what, future))
        raise


async def run_tokenizer(run: RunState) -> Any:
    if run.tokenizer is None:
        run.tokenizer = await call_sdk("loading the tokenizer", run.client.get_tokenizer)
    return run.tokenizer


class RunConfig(BaseModel):
    base_model: str
    rank: int | None
    train_mlp: bool | None = None
    train_attn: bool | None = None
    train_unembed: bool | None = None
    seed: int | None = None


def run_config(run: RunState) -> RunConfig:
    return RunConfig(
        base_model=run.base_model,
        rank=run.rank,
        train_mlp=run.train_mlp,
        train_attn=run.train_attn,
        train_unembed=run.train_unembed,
        seed=run.seed,
    )


def per_token_loss(metrics: dict[str, float], weight_sum: float) -> float:
    """Loss per trained token: the SDK's `loss_sum` over the weighted positions we sent."""
    if weight_sum > 0 and "loss_sum" in metrics:
        return float(metrics["loss_sum"]) / weight_sum
    value = metrics.get("loss_mean")
    return float(value) if value is not None else math.nan
