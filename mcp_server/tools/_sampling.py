"""The sampling client for what `sample` and `evaluate` name as `model`: a run's current weights,
a saved checkpoint, or a base model.

A run's current weights need sampler weights saved on the backend. They are saved once per
weights version (the run's optimizer step) and reused until the run trains again; each time new
ones are saved, the previous ones are deleted, so a run keeps at most one set. They are named
with the SDK's own `temp-sampling-` prefix (pytrio 0.2.9 `save_weights_and_get_sampling_client`)
and saved with the same lifetime, so listings can tell them from the user's checkpoints.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from mcp_server import guards
from mcp_server.app import AppState
from mcp_server.backend import Backend, call_sdk
from mcp_server.checkpoints import TEMP_SAMPLING_PREFIX, guarded_checkpoint
from mcp_server.errors import BackendFailure, InvalidInput
from mcp_server.runs import RunState
from mcp_server.tools._common import ID_PATTERN, run_tokenizer, sdk, settled, submit

log = logging.getLogger("trio_mcp.sampling")

# pytrio 0.2.9 keeps its own temporary sampler weights this long (`_TEMP_SAMPLING_TTL_SECONDS`).
TEMP_SAMPLER_TTL_S = 6 * 60 * 60

ModelKind = Literal["run", "checkpoint", "base_model"]
# The `model` argument of the tools that read a model (sample, evaluate).
MODEL = Field(
    min_length=1,
    max_length=1000,
    pattern=ID_PATTERN,
    description="A run_id open in this session (its current weights), any checkpoint path "
    "list_checkpoints shows (this session's or an earlier one's), or a base model from "
    "list_models.",
)


@dataclass(frozen=True)
class Sampler:
    client: Any
    tokenizer: Any
    kind: ModelKind
    run: RunState | None  # the run whose current weights these are (kind 'run')
    version: int  # the run's optimizer step the weights are from (0 for other kinds)


@dataclass
class RunSampler:
    """A run's sampling client for one weights version, and the sampler weights behind it."""

    step: int
    client: Any
    path: str


async def run_sampler(app: AppState, be: Backend, run: RunState) -> Sampler:
    current = run.sampler
    if not isinstance(current, RunSampler) or current.step != run.step:
        name = f"{TEMP_SAMPLING_PREFIX}{uuid.uuid4().hex}"
        # Events on the training client: a cancel must not cut their submission in half.
        future = await submit(
            "saving weights for sampling",
            run.client.save_weights_for_sampler_async(name, ttl_seconds=TEMP_SAMPLER_TTL_S),
        )
        saved = await settled("saving weights for sampling", future, on_cancel=lambda _: None)
        client = await sdk(
            "opening the weights for sampling",
            run.client.create_sampling_client_async(model_path=saved.path),
        )
        run.sampler = RunSampler(run.step, client, saved.path)
        if isinstance(current, RunSampler):
            await delete_quietly(be, run.run_id, current.path)
    return Sampler(run.sampler.client, await run_tokenizer(run), "run", run, run.step)


async def delete_quietly(be: Backend, run_id: str, path: str) -> bool:
    """Delete a run's temporary sampler weights (superseded, or of a run that ended); whether
    they were. A failure only leaves them to expire on their own."""
    try:
        listed = await sdk("listing checkpoints", be.rest.list_checkpoints_async(run_id))
        for checkpoint in listed.checkpoints:
            if checkpoint.path == path:
                await sdk(
                    "deleting old sampler weights",
                    be.rest.delete_checkpoint_async(run_id, checkpoint.checkpoint_id),
                )
                return True
    except BackendFailure as exc:
        log.warning("old sampler weights %s were not deleted: %s", path, exc)
    return False


async def open_sampler(app: AppState, be: Backend, model: str) -> Sampler:
    """The sampler for `model`, with the guards applied to whatever it names."""
    run = app.runs.runs.get(model)
    if run is not None:
        return await run_sampler(app, be, run)
    if "://" in model:
        # Any checkpoint list_checkpoints shows, from this session or an earlier one: the
        # guards apply through the run that made it, read from the backend.
        origin = await guarded_checkpoint(app, model)
        client = await sdk(
            "opening the checkpoint for sampling",
            be.service.create_sampling_client_async(base_model=origin.base_model, model_path=model),
        )
        owner = app.runs.runs.get(origin.run_id)
        if owner is not None:
            tokenizer = await run_tokenizer(owner)
        else:
            tokenizer = await call_sdk("loading the tokenizer", client.get_tokenizer)
        return Sampler(client, tokenizer, "checkpoint", None, 0)
    offered = list(await call_sdk("listing models", be.service.get_supported_models))
    if model in offered:
        guards.check_model(app.config, model, offered)
        client = await sdk(
            "opening the base model", be.service.create_sampling_client_async(base_model=model)
        )
        tokenizer = await call_sdk("loading the tokenizer", client.get_tokenizer)
        return Sampler(client, tokenizer, "base_model", None, 0)
    raise InvalidInput(
        f"model {model!r} is neither a run open in this session, a checkpoint path "
        f"(trio://...), nor a base model ({', '.join(offered)}); use create_training_run, "
        "list_checkpoints or list_models"
    )
