"""Every number that enters trio-local, checked at the edge of both planes.

The SDK's pydantic models check types, not values: NaN and inf pass as floats, any int passes
(SQLite and torch then fail on ints past 64 bits), and a learning rate of -1 is a float like
any other. A request here is refused with a 400 that names the field and its range before it
reaches the store, the scheduler or the model (a bad event's content as that event's failure,
which costs the SDK user one call, not the client). Bounds the SDK itself defines come from
pytrio_facts; the ones trio-local adds (response sizes, TTLs) are named constants below.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel
from pytrio.protocol.actor.events.event import EVENT_PROTOCOL_VERSION, EventEnvelope, EventType
from pytrio.protocol.actor.events.trainer.forward import TrainerForwardBackwardPayload
from pytrio.protocol.actor.events.trainer.init_run import TrainerInitRunPayload
from pytrio.protocol.actor.events.trainer.optimize_step import TrainerOptimizeStepPayload
from pytrio.protocol.actor.events.trainer.save import TrainerSavePayload
from pytrio.protocol.actor.sampling_run.sample import SampleRequest

from pytrio_facts import LIMITS, LOSS_NAMES, SAMPLING_WIRE_KEYS
from trio_local.errors import ApiError

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
RANK_MIN, RANK_MAX = LIMITS.lora_rank_min, LIMITS.lora_rank_max
CHECKPOINT_NAME = re.compile(LIMITS.checkpoint_name_pattern)
CHECKPOINT_NAME_MAX = LIMITS.checkpoint_name_max_length
# trio-local's own bounds.
MAX_TTL_SECONDS = 10 * 365 * 24 * 3600  # a TTL past this is a mistake, not a wish
# Like vLLM's default max_logprobs: each position answers k (id, logprob) pairs, so k times
# the prompt length bounds the response; the whole vocabulary (151,936) would be gigabytes.
MAX_TOPK_PROMPT_LOGPROBS = 20
MAX_STOP_SEQUENCES = 32  # each one is searched for after every generated token
MAX_STOP_LENGTH = 256
# A sample response is built in memory and encoded as JSON; past this estimate it is refused
# before any work. Per number, generously: ~24 bytes as JSON text plus the Python objects.
MAX_SAMPLE_RESPONSE_BYTES = 64 * 1024 * 1024
BYTES_PER_NUMBER = 64


# pytrio 0.2.9's hint for this code fits a refused value ("Check the request arguments and
# retry with valid values."); invalid_request_body's ("could not be parsed. Check the SDK
# version") is kept for bodies that do not parse.
VALUE_REFUSED = "validation_failed"


def refuse(field: str, rule: str) -> ApiError:
    return ApiError(400, VALUE_REFUSED, f"{field} must be {rule}")


def check_finite(value: Any, field: str) -> None:
    """Every float anywhere inside `value` is finite, every int fits in 64 bits."""
    if isinstance(value, bool) or value is None or isinstance(value, str | bytes):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise refuse(field, f"a finite number (got {value})")
    elif isinstance(value, int):
        if not INT64_MIN <= value <= INT64_MAX:
            raise refuse(field, "an integer in [-2**63, 2**63-1]")
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            check_finite(getattr(value, name), f"{field}.{name}" if field else name)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            check_finite(item, f"{field}.{key}" if field else str(key))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            check_finite(item, f"{field}[{index}]")


def check_int(value: int | None, field: str, low: int, high: int) -> None:
    if value is not None and not low <= value <= high:
        raise refuse(field, f"an integer in [{low}, {high}] (got {value})")


def check_rank(rank: int, field: str = "lora_rank") -> None:
    check_int(rank, field, RANK_MIN, RANK_MAX)


def check_checkpoint_name(name: str, field: str = "name") -> None:
    # fullmatch: the pattern's `$` alone would also accept a trailing newline.
    if len(name) > CHECKPOINT_NAME_MAX or CHECKPOINT_NAME.fullmatch(name) is None:
        raise refuse(
            field,
            f"at most {CHECKPOINT_NAME_MAX} characters matching {LIMITS.checkpoint_name_pattern}",
        )


def check_loss_name(name: str) -> str:
    normalised = name.strip().lower()
    if normalised not in LOSS_NAMES:
        raise refuse("payload.loss.type", f"one of {', '.join(LOSS_NAMES)} (got {name!r})")
    return normalised


# actor plane
def _check_adam(payload: TrainerOptimizeStepPayload) -> None:
    adam = payload.adam_params
    rules = (
        ("learning_rate", adam.learning_rate >= 0, ">= 0"),
        ("beta1", 0 <= adam.beta1 < 1, "in [0, 1)"),
        ("beta2", 0 <= adam.beta2 < 1, "in [0, 1)"),
        ("eps", adam.eps > 0, "> 0"),
        ("weight_decay", adam.weight_decay >= 0, ">= 0"),
        ("grad_clip_norm", adam.grad_clip_norm >= 0, ">= 0 (0 turns clipping off)"),
    )
    for name, ok, rule in rules:
        if not ok:
            raise refuse(f"payload.adam_params.{name}", f"a finite number {rule}")


def _check_save(payload: TrainerSavePayload) -> None:
    check_checkpoint_name(payload.name, "payload.name")
    check_int(payload.ttl_seconds, "payload.ttl_seconds", 1, MAX_TTL_SECONDS)


def _check_shapes(payload: TrainerForwardBackwardPayload) -> None:
    """Every per-token list of a datum has one entry per input token."""
    for index, datum in enumerate(payload.data):
        length = 0
        for chunk in datum.model_input.chunks:
            if chunk.type == "encoded_text":
                length += len(chunk.tokens)
            elif chunk.expected_tokens is None:
                length = -1  # the trainer infers an image's length from the targets
                break
            else:
                length += chunk.expected_tokens
        if length < 0:
            continue
        lists = {"target_ids": datum.target_ids}
        lists |= {"weights": datum.weights, "logprobs": datum.logprobs}
        lists["advantages"] = datum.advantages
        for name, values in lists.items():
            if values is not None and len(values) != length:
                raise refuse(
                    f"payload.data[{index}].{name}",
                    f"{length} entries, one per input token (got {len(values)})",
                )


def check_envelope(envelope: EventEnvelope) -> None:
    """Range checks of an envelope's frame (its version and metadata), already parsed by the
    SDK's models: a bad frame is an HTTP 400, since no event response can be framed for it."""
    if envelope.version != EVENT_PROTOCOL_VERSION:
        raise refuse("version", f"{EVENT_PROTOCOL_VERSION}, the protocol pytrio 0.2.9 speaks")
    check_finite(envelope.metadata, "metadata")
    check_int(envelope.metadata.step, "metadata.step", 0, INT64_MAX)


def check_payload(envelope: EventEnvelope, payload: Any) -> None:
    """Range checks of an event's content, already parsed by the SDK's models. The refusal is
    answered as that event's failure: the SDK then fails only that call and the client goes on.
    """
    check_finite(payload, "payload")
    if isinstance(payload, TrainerInitRunPayload):
        check_rank(payload.lora_config.rank, "payload.lora_config.rank")
    elif isinstance(payload, TrainerForwardBackwardPayload):
        check_loss_name(payload.loss.type)
        _check_shapes(payload)
    elif isinstance(payload, TrainerOptimizeStepPayload):
        _check_adam(payload)
    elif isinstance(payload, TrainerSavePayload):
        _check_save(payload)
    elif envelope.type not in (EventType.TRAINER_END_RUN,):  # pragma: no cover - all covered
        raise refuse("type", "a trainer event")


def check_sample(request: SampleRequest) -> None:
    check_finite(request, "")
    low = LIMITS.sample_topk_prompt_logprobs_min
    check_int(request.topk_prompt_logprobs, "topk_prompt_logprobs", low, MAX_TOPK_PROMPT_LOGPROBS)
    params = request.sampling_params
    unknown = sorted(set(params) - set(SAMPLING_WIRE_KEYS))
    if unknown:
        raise refuse(
            f"sampling_params.{unknown[0]}", f"absent: the keys are {', '.join(SAMPLING_WIRE_KEYS)}"
        )
    for name in ("temperature", "top_p"):
        value = params.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise refuse(f"sampling_params.{name}", "a number")
    for name in ("max_tokens", "top_k", "seed"):
        value = params.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise refuse(f"sampling_params.{name}", "an integer")
    top_k = params.get("top_k")
    if top_k is not None and top_k < LIMITS.sample_top_k_unlimited:
        raise refuse("sampling_params.top_k", f">= {LIMITS.sample_top_k_unlimited} (-1: no limit)")
    stop = params.get("stop") or []
    stop_ids = params.get("stop_token_ids") or []
    if not isinstance(stop, list) or not all(isinstance(s, str) for s in stop):
        raise refuse("sampling_params.stop", "a list of strings")
    if len(stop) > MAX_STOP_SEQUENCES or any(len(s) > MAX_STOP_LENGTH for s in stop):
        raise refuse(
            "sampling_params.stop",
            f"at most {MAX_STOP_SEQUENCES} strings of at most {MAX_STOP_LENGTH} characters",
        )
    if not isinstance(stop_ids, list) or not all(
        isinstance(t, int) and not isinstance(t, bool) for t in stop_ids
    ):
        raise refuse("sampling_params.stop_token_ids", "a list of integers")
    if len(stop_ids) > MAX_STOP_SEQUENCES:
        raise refuse("sampling_params.stop_token_ids", f"at most {MAX_STOP_SEQUENCES} ids")


def estimated_sample_bytes(request: SampleRequest, prompt_tokens: int) -> int:
    """An upper estimate of a sample response's size in memory, from the request alone."""
    max_tokens = int(request.sampling_params.get("max_tokens") or 0)
    per_position: int = 1 + 2 * request.topk_prompt_logprobs  # its logprob, then k (id, logprob)
    generated: int = request.num_samples * max_tokens * 2  # a token id and its logprob
    return (prompt_tokens * per_position + generated) * BYTES_PER_NUMBER


def check_sample_size(request: SampleRequest, prompt_tokens: int) -> None:
    estimate = estimated_sample_bytes(request, prompt_tokens)
    if estimate > MAX_SAMPLE_RESPONSE_BYTES:
        raise ApiError(
            400,
            "response_too_large",
            f"this sample request would answer about {estimate // 2**20} MiB (prompt of "
            f"{prompt_tokens} tokens x topk_prompt_logprobs {request.topk_prompt_logprobs}, "
            f"num_samples {request.num_samples} x max_tokens); trio-local answers at most "
            f"{MAX_SAMPLE_RESPONSE_BYTES // 2**20} MiB: lower topk_prompt_logprobs, num_samples "
            "or max_tokens",
        )
