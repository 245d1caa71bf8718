"""Every number at the edge of both planes: refused naming the field and range. A control or
sampling request gets a 400; an event's content gets that event's failure (a `failed` event
response, which pytrio 0.2.9 raises as `EventFailedError` for that call only, while an error at
submit breaks its training client for good)."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator

import pytest

import trio_local
from pytrio_facts import LIMITS, LOSS_NAMES
from tests.trio_local.hardening.wire import (
    ADAM,
    MODEL,
    V1,
    Wire,
    body_of,
    datum,
    forward_payload,
    lora,
    sample_body,
)
from trio_local.background import LocalService


@pytest.fixture(scope="module")
def service() -> Iterator[LocalService]:
    with trio_local.serve_in_background(configure_sdk=False) as running:
        yield running


@pytest.fixture(scope="module")
def wire(service: LocalService) -> Iterator[Wire]:
    client = Wire(service)
    yield client
    client.close()


@pytest.fixture
def run(wire: Wire) -> Iterator[dict]:
    session = wire.session()
    yield wire.training_run(session)
    wire.close_session(session)  # frees its slot (--max-runs)


def refused(answer, field: str) -> str:
    assert answer.status_code == 400, (answer.status_code, answer.content[:300])
    body = body_of(answer)
    assert field in body["message"], body
    return body["message"]


def failed(answer, field: str, code: str = "validation_failed") -> str:
    """An event accepted as failed at once, with the SDK's code and the field in its message."""
    assert answer.status_code == 200, (answer.status_code, answer.content[:300])
    body = body_of(answer)
    assert body["status"] == "failed", body
    assert body["error"]["code"] == code and field in body["error"]["message"], body
    return body["error"]["message"]


@pytest.mark.parametrize("field", ["weights", "logprobs", "advantages"])
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_loss_inputs_are_refused(wire: Wire, run: dict, field: str, bad: float) -> None:
    payload = forward_payload([datum([1, 2, 3, 4], **{field: [0.5, bad, 0.5, 0.5]})])
    answer = wire.event(run, "trainer.forward_backward", payload, index=1)
    assert "finite" in failed(answer, f"payload.data[0].{field}[1]")


@pytest.mark.parametrize(
    ("field", "value", "rule"),
    [
        ("learning_rate", math.inf, "finite"),
        ("learning_rate", -1.0, ">= 0"),
        ("beta1", 5.0, "[0, 1)"),
        ("beta2", 1.0, "[0, 1)"),
        ("eps", 0.0, "> 0"),
        ("weight_decay", math.nan, "finite"),
        ("grad_clip_norm", -0.5, ">= 0"),
    ],
)
def test_adam_params_out_of_range_are_refused(
    wire: Wire, run: dict, field: str, value: float, rule: str
) -> None:
    payload = {"adam_params": {**ADAM, field: value}}
    answer = wire.event(run, "trainer.optimize_step", payload, index=1)
    assert rule in failed(answer, f"payload.adam_params.{field}")


def test_init_run_rank_is_bounded_by_the_sdk_and_must_match_the_run(wire: Wire, run: dict) -> None:
    answer = wire.event(
        run, "trainer.init_run", {"base_model": MODEL, "lora_config": lora(4096)}, index=1
    )
    message = failed(answer, "payload.lora_config.rank")
    assert f"[{LIMITS.lora_rank_min}, {LIMITS.lora_rank_max}]" in message
    answer = wire.event(
        run, "trainer.init_run", {"base_model": MODEL, "lora_config": lora(8)}, index=2
    )
    failed(answer, "rank 8", code="lora_config_mismatch")
    # the run is still there for the right settings
    answer = wire.event(
        run, "trainer.init_run", {"base_model": MODEL, "lora_config": lora(4)}, index=3
    )
    assert wire.result(run, answer)["status"] == "succeeded"


@pytest.mark.parametrize("rank", [LIMITS.lora_rank_min - 1, LIMITS.lora_rank_max + 1, 0, 2**70])
def test_control_plane_rank_comes_from_the_sdk_bounds(wire: Wire, rank: int) -> None:
    answer = wire.create_training_run(wire.session(), lora_rank=rank)
    assert answer.status_code == 400
    assert "lora_rank" in answer.json()["message"]


def test_huge_integers_are_a_400_never_an_internal_error(wire: Wire, run: dict) -> None:
    session = wire.session()
    assert wire.create_training_run(session, seed=2**70).status_code == 400
    big_meta = {"sdk_version": "0.2.9", "user_metadata": {"n": 2**70}}
    answer = wire.control("POST", f"{V1}/service-sessions", json=big_meta)
    refused(answer, "user_metadata.n")
    answer = wire.control("GET", f"{V1}/training-runs", params={"offset": 2**70})
    assert answer.status_code == 400 and "offset" in answer.json()["message"]
    envelope = wire.envelope(
        run["training_run_cuid"], "trainer.end_run", {"source": "sdk"}, 1, step=2**64 - 1
    )
    refused(wire.submit(run["actor_jwt"]["token"], envelope), "metadata.step")


def test_an_event_index_must_be_the_next_one(wire: Wire, run: dict) -> None:
    init = {"base_model": MODEL, "lora_config": lora(4)}
    answer = wire.event(run, "trainer.init_run", init, index=2**64 - 1)
    assert answer.status_code in (400, 409)
    answer = wire.event(run, "trainer.init_run", init, index=2**63 - 1)
    assert answer.status_code == 409
    assert "expects 1" in body_of(answer)["message"]
    accepted = wire.event(run, "trainer.init_run", init, index=1)
    assert accepted.status_code == 200
    assert wire.result(run, accepted)["status"] == "succeeded"  # nothing was blocked
    later = wire.event(run, "trainer.forward", forward_payload([datum([1, 2, 3, 4])]), index=2)
    assert wire.result(run, later)["status"] == "succeeded"


@pytest.mark.parametrize("ttl", [-5, 0, 10**12, 2**64 - 1])
def test_a_ttl_outside_its_range_is_refused(wire: Wire, run: dict, ttl: int) -> None:
    payload = {"name": "ttl-check", "ttl_seconds": ttl, "overwrite": False}
    answer = wire.event(run, "trainer.save_weights", payload, index=1)
    failed(answer, "payload.ttl_seconds")


@pytest.mark.parametrize("name", ["name\n", "a" * (LIMITS.checkpoint_name_max_length + 1), "-x"])
def test_checkpoint_names_fullmatch_the_sdk_pattern(wire: Wire, run: dict, name: str) -> None:
    answer = wire.event(run, "trainer.save_state", {"name": name}, index=1)
    failed(answer, "payload.name")


def test_an_unknown_loss_is_refused_with_the_sdk_names(wire: Wire, run: dict) -> None:
    payload = forward_payload([datum([1, 2, 3, 4])], loss="hinge")
    message = failed(wire.event(run, "trainer.forward", payload, index=1), "payload.loss.type")
    assert all(name in message for name in LOSS_NAMES)


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"topk_prompt_logprobs": 151936}, "topk_prompt_logprobs"),
        ({"sampling_params": {"max_tokens": 2, "temperature": math.nan}}, "temperature"),
        ({"sampling_params": {"max_tokens": 2, "seed": 2**70}}, "sampling_params.seed"),
        ({"num_samples": 2**70}, "num_samples"),
        ({"sampling_params": {"max_tokens": 2, "top_k": -7}}, "sampling_params.top_k"),
        ({"sampling_params": {"max_tokens": 2, "max_new_tokens": 3}}, "max_new_tokens"),
        ({"sampling_params": {"max_tokens": 2, "stop": ["x"] * 1000}}, "sampling_params.stop"),
    ],
)
def test_sample_requests_out_of_bounds_are_refused(wire: Wire, fields: dict, field: str) -> None:
    sampler = wire.sampling_run(wire.session())
    refused(wire.sample(sampler, sample_body([1, 2, 3], **fields)), field)


@pytest.mark.slow
def test_the_largest_prompt_logprobs_request_answers_and_never_stalls_others(
    wire: Wire, service: LocalService
) -> None:
    """The issue's stall: a long prompt with a huge top-k. Now the largest allowed one runs
    while the control plane keeps answering."""
    from trio_local.protocol.bounds import MAX_TOPK_PROMPT_LOGPROBS

    sampler = wire.sampling_run(wire.session())
    started = time.monotonic()
    refused(wire.sample(sampler, sample_body(list(range(1, 200)), topk_prompt_logprobs=151936)), "")
    assert time.monotonic() - started < 10  # refused before any work

    prompt = list(range(1000, 1000 + 1024))
    answers: list = []
    body = sample_body(
        prompt, return_prompt_logprobs=True, topk_prompt_logprobs=MAX_TOPK_PROMPT_LOGPROBS
    )
    worker = threading.Thread(target=lambda: answers.append(wire.sample(sampler, body)))
    worker.start()
    slowest = 0.0
    while worker.is_alive():
        asked = time.monotonic()
        assert wire.control("GET", "/models").status_code == 200
        slowest = max(slowest, time.monotonic() - asked)
        time.sleep(0.05)
    worker.join()
    assert slowest < 5.0, slowest
    answer = answers[0]
    assert answer.status_code == 200, answer.text[:300]
    top = answer.json()["topk_prompt_logprobs"]
    assert len(top) == len(prompt) and top[0] is None
    assert all(len(row) == MAX_TOPK_PROMPT_LOGPROBS for row in top[1:])


def test_ended_runs_are_never_revived_past_max_runs(tmp_path) -> None:
    with trio_local.serve_in_background(
        data_dir=tmp_path, configure_sdk=False, max_training_runs=1
    ) as single:
        wire = Wire(single)
        first_session = wire.session()
        trained = wire.training_run(first_session)
        init = {"base_model": MODEL, "lora_config": lora(4)}
        started = wire.result(trained, wire.event(trained, "trainer.init_run", init, 1))
        assert started["status"] == "succeeded"
        wire.close_session(first_session)  # the client is gone: its run ends, its slot frees
        assert wire.run_status(trained["training_run_cuid"]) == "ENDED"

        second_session = wire.session()
        waiting = wire.training_run(second_session)  # takes the only slot
        forward = forward_payload([datum([1, 2, 3, 4])])
        answer = wire.event(trained, "trainer.forward", forward, index=2)  # the old token
        assert answer.status_code == 410
        assert body_of(answer)["code"] == "training_run_ended"
        assert wire.run_status(trained["training_run_cuid"]) == "ENDED"

        # a run that never started may start late, but only through the capacity check
        wire.close_session(second_session)
        holder = wire.training_run(wire.session())
        answer = wire.event(waiting, "trainer.init_run", init, index=1)
        assert answer.status_code == 429
        assert wire.run_status(waiting["training_run_cuid"]) == "ENDED"
        assert wire.run_status(holder["training_run_cuid"]) == "CREATED"
        wire.close()
