"""The --check runtime without a service: a check never breaks the work it watches.

Fault injection (a check that raises, a full queue) and property-based fuzzing of every check
with arbitrary wire data, built with the SDK's own payload models (which, like the wire, do not
require the per-token lists to be as long as the input).
"""

from __future__ import annotations

import math
import threading
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pytrio.protocol.actor.events.event import EventType
from pytrio.protocol.actor.events.trainer.forward import TrainerForwardBackwardPayload
from pytrio.protocol.actor.events.trainer.optimize_step import TrainerOptimizeStepPayload

from trio_local.checks import runtime
from trio_local.checks.base import Check
from trio_local.checks.chat import ChatTokens
from trio_local.checks.observations import TrainerEvent
from trio_local.checks.runtime import CHECKS, Checker

# A ChatML-shaped vocabulary: 1 turn start, 2 turn end, 3/4/5 role words, 6 newline, 7 EOS.
CHAT = ChatTokens(
    start=1,
    end=2,
    headers=(((3, 6), "system"), ((4, 6), "user"), ((5, 6), "assistant")),
    stop_ids=frozenset({2, 7}),
)


def envelope(event_type: EventType, index: int = 2, step: int = 0):
    meta = SimpleNamespace(run_id="tr_fuzz", step=step, index=index)
    return SimpleNamespace(type=event_type, metadata=meta)


def forward_payload(data: list[dict], loss: str = "cross_entropy", auto_shift: bool = False):
    return TrainerForwardBackwardPayload.model_validate(
        {
            "data": data,
            "auto_shift": auto_shift,
            "loss": {"type": loss, "config": {}},
            "gradient_accumulation": {
                "total_samples": len(data),
                "total_active_tokens": 1,
                "total_advantage_tokens": 0,
            },
        }
    )


class Explodes(Check):
    name = "explodes"
    title = "always raises"
    fix = "-"

    def on_event(self, event, ctx) -> None:
        raise RuntimeError("boom")


class Counts(Check):
    name = "counts"
    title = "counts events"
    fix = "-"

    def on_event(self, event, ctx) -> None:
        self.tally.add(event.run_id, {"type": event.type})


def test_a_raising_check_is_counted_skipped_and_the_work_still_answers() -> None:
    checker = Checker(checks=(Explodes, Counts))
    chunk = {"type": "encoded_text", "tokens": [5, 6]}
    payload = forward_payload([{"model_input": {"chunks": [chunk]}, "target_ids": [6, 7]}])
    for index in range(5):
        work = checker.trainer_work(
            envelope(EventType.TRAINER_FORWARD_BACKWARD, index=index + 2),
            payload,
            lambda: SimpleNamespace(result={"ok": True}),
        )
        assert work().result == {"ok": True}
    assert checker.drain(10)
    report = checker.report()
    assert report.check_errors == {"explodes": runtime.MAX_ERRORS}  # then switched off
    assert [(f.check, f.count) for f in report.findings] == [("counts", 5)]


def test_a_failing_work_item_is_still_observed_and_its_error_propagates() -> None:
    checker = Checker(checks=(Counts,))

    def fails():
        raise ValueError("engine said no")

    work = checker.trainer_work(envelope(EventType.TRAINER_OPTIMIZE_STEP), None, fails)
    with pytest.raises(ValueError, match="engine said no"):
        work()
    assert checker.drain(10)
    assert checker.report().findings[0].count == 1


def test_a_full_queue_drops_observations_instead_of_blocking(monkeypatch) -> None:
    monkeypatch.setattr(runtime, "QUEUE_SIZE", 2)
    gate = threading.Event()

    class Slow(Check):
        name = "slow"
        title = "waits"
        fix = "-"

        def on_event(self, event, ctx) -> None:
            gate.wait(10)

    checker = Checker(checks=(Slow,))
    for index in range(6):
        checker.trainer_work(
            envelope(EventType.TRAINER_SAVE_STATE, index=index + 2), None, lambda: None
        )()
    gate.set()
    assert checker.drain(10)
    assert checker.report().dropped >= 3


tokens = st.lists(st.integers(min_value=-100, max_value=8), min_size=1, max_size=24)
floats = st.lists(
    st.one_of(
        st.sampled_from([0.0, 1.0, -100.0, -1.5, math.nan, math.inf]),
        st.floats(allow_nan=True, allow_infinity=True, width=32),
    ),
    max_size=26,
)


@st.composite
def datum(draw) -> dict:
    out: dict = {
        "model_input": {"chunks": [{"type": "encoded_text", "tokens": draw(tokens)}]},
        "target_ids": draw(tokens),
    }
    for key in ("weights", "logprobs", "advantages"):
        if draw(st.booleans()):
            out[key] = draw(floats)
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.lists(datum(), min_size=1, max_size=3),
    loss=st.sampled_from(["cross_entropy", "importance_sampling", "ppo"]),
    auto_shift=st.booleans(),
    loss_sum=st.sampled_from([0.5, 7.0, math.nan]),
)
def test_no_check_raises_on_any_wire_data(data, loss, auto_shift, loss_sum) -> None:
    checker = Checker(checks=CHECKS)
    checker.context._chat[""] = CHAT  # the chat checks run on the toy vocabulary
    payload = forward_payload(data, loss, auto_shift)
    metrics = {"loss_sum": loss_sum, "loss_mean": loss_sum, "token_count": 3}
    optimize = TrainerOptimizeStepPayload.model_validate(
        {
            "adam_params": {
                "learning_rate": 0.1,
                "beta1": 0.9,
                "beta2": 0.95,
                "eps": 1e-8,
                "weight_decay": 0.0,
                "grad_clip_norm": 0.0,
            }
        }
    )
    for step in range(5):
        for check in checker.checks:
            event = TrainerEvent(
                "tr_fuzz", "trainer.forward_backward", step, 2, payload, {"metrics": metrics}
            )
            check.on_event(event, checker.context)  # raises straight into the test
            optim = TrainerEvent(
                "tr_fuzz", "trainer.optimize_step", step, 3, optimize, {"metrics": {}}
            )
            checker.context.update(optim)
            check.on_event(optim, checker.context)
    checker.report()  # every summary builds


def test_chat_roles_label_turns_headers_and_ends() -> None:
    sequence = [1, 3, 6, 9, 9, 2, 6, 1, 4, 6, 9, 2, 6, 1, 5, 6, 9, 2, 6]
    labels = CHAT.roles(sequence)
    assert labels == [
        "header", "header", "header", "system", "system", "system:end", "between",
        "header", "header", "header", "user", "user:end", "between",
        "header", "header", "header", "assistant", "assistant:end", "between",
    ]  # fmt: skip
    assert CHAT.roles([9, 9, 9]) is None
