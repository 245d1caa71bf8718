"""The checker: a queue the request paths feed and one thread that runs every check.

The hooks wrap the work the scheduler executes, so observations arrive in execution order
(the order that matters for "sampled before or after that optimizer step"). Offering one is a
non-blocking `put`; when the queue is full the observation is dropped and counted, so a slow
check can never hold up training.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from pytrio.protocol.actor.events.base import ProtocolPayload
from pytrio.protocol.actor.events.event import EventEnvelope
from pytrio.protocol.actor.sampling_run.sample import SampleRequest

from trio_local.checks.base import Check
from trio_local.checks.chat import ChatTokens
from trio_local.checks.checkpoint_reused import CheckpointReused
from trio_local.checks.context import CheckContext
from trio_local.checks.eos_untrained import EosUntrained
from trio_local.checks.image_tokens import ImageTokens
from trio_local.checks.minus_100 import Minus100
from trio_local.checks.non_finite import NonFinite
from trio_local.checks.observations import (
    FORWARD,
    FORWARD_BACKWARD,
    Observation,
    SampleCall,
    TrainerEvent,
)
from trio_local.checks.policy_weights import PolicyWeights
from trio_local.checks.prompt_weights import PromptWeights
from trio_local.checks.report import CheckReport, Finding, Observed, rule_code
from trio_local.checks.rising_loss import RisingLoss
from trio_local.checks.stale_sampler import StaleSampler
from trio_local.checks.unshifted_targets import UnshiftedTargets
from trio_local.checks.zero_advantages import ZeroAdvantages
from trio_local.protocol.events import EventOutcome

logger = logging.getLogger("trio_local.checks")
CHECKS: tuple[type[Check], ...] = (
    UnshiftedTargets,
    Minus100,
    PromptWeights,
    EosUntrained,
    PolicyWeights,
    ZeroAdvantages,
    NonFinite,
    RisingLoss,
    StaleSampler,
    CheckpointReused,
    ImageTokens,
)
QUEUE_SIZE = 4096
MAX_ERRORS = 3  # a check that raised this often is switched off for the rest of the run


class Checker:
    def __init__(
        self,
        chat_tokens_for: Callable[[str], ChatTokens | None] | None = None,
        checks: tuple[type[Check], ...] = CHECKS,
    ) -> None:
        self.context = CheckContext(chat_tokens_for=chat_tokens_for)
        self.checks = [check() for check in checks]
        self.errors: Counter[str] = Counter()
        self.observed = Observed()
        self.dropped = 0
        self._queue: queue.Queue[Observation | None] = queue.Queue(QUEUE_SIZE)
        self._lock = threading.Lock()  # guards the checks' state against report()
        self._idle = threading.Condition()
        self._pending = 0
        self._thread: threading.Thread | None = None

    # hooks (called on the scheduler's worker thread)
    def trainer_work(
        self,
        envelope: EventEnvelope,
        payload: ProtocolPayload,
        execute: Callable[[], EventOutcome],
    ) -> Callable[[], EventOutcome]:
        """`execute` wrapped so its event is observed."""

        def run() -> EventOutcome:
            outcome = None
            try:
                outcome = execute()
                return outcome
            finally:
                self.offer(_trainer_event(envelope, payload, getattr(outcome, "result", None)))

        return run

    def sample_work(
        self,
        sampling_run: str,
        source_uri: str | None,
        request: SampleRequest,
        execute: Callable[[], dict[str, Any]],
        model_id: str = "",
    ) -> Callable[[], dict[str, Any]]:
        def run() -> dict[str, Any]:
            result = None
            try:
                result = execute()
                return result
            finally:
                self.offer(SampleCall(sampling_run, source_uri, request, result, model_id))

        return run

    def refused_event(self, envelope: EventEnvelope, payload: ProtocolPayload) -> None:
        """An event the service refused before scheduling it (e.g. a NaN): observed as failed."""
        self.offer(_trainer_event(envelope, payload, None))

    def refused_sample(
        self, sampling_run: str, source_uri: str | None, request: SampleRequest
    ) -> None:
        self.offer(SampleCall(sampling_run, source_uri, request, None))

    def offer(self, observation: Observation) -> None:
        """Queue `observation` without blocking; never raises into the request path."""
        try:
            with self._idle:
                if self._queue.full():
                    self.dropped += 1
                    return
                self._pending += 1
                self._queue.put_nowait(observation)  # only this method puts: room is certain
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._loop, name="trio-local-check", daemon=True
                    )
                    self._thread.start()
        except Exception:
            logger.warning("trio-local check could not queue an observation", exc_info=True)

    # the checker thread
    def _loop(self) -> None:
        while True:
            observation = self._queue.get()
            if observation is None:
                return
            started = time.thread_time()
            try:
                with self._lock:
                    self._observe(observation)
                    self.observed.checker_cpu_s += time.thread_time() - started
            finally:
                with self._idle:
                    self._pending -= 1
                    self._idle.notify_all()

    def _observe(self, observation: Observation) -> None:
        try:
            self.context.update(observation)
        except Exception:
            logger.warning("trio-local check bookkeeping failed", exc_info=True)
        if isinstance(observation, TrainerEvent):
            self.observed.events += 1
            if observation.type in (FORWARD, FORWARD_BACKWARD):
                self.observed.data += len(observation.payload.data)
        else:
            self.observed.samples += 1
        for check in self.checks:
            if self.errors[check.name] >= MAX_ERRORS:
                continue
            try:
                if isinstance(observation, TrainerEvent):
                    check.on_event(observation, self.context)
                else:
                    check.on_sample(observation, self.context)
            except Exception:
                self.errors[check.name] += 1
                logger.warning("trio-local check %s failed; skipped", check.name, exc_info=True)

    # reading
    def drain(self, timeout: float) -> bool:
        """Wait until every offered observation is checked; False on timeout."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def report(self, run_id: str | None = None) -> CheckReport:
        """The report so far; with `run_id`, only that run's findings and examples."""
        findings = []
        with self._lock:
            for check in self.checks:
                try:
                    tally = check.summary(self.context)
                except Exception:
                    self.errors[check.name] += 1
                    logger.warning("trio-local check %s failed", check.name, exc_info=True)
                    continue
                runs = {
                    run: entry
                    for run, entry in tally.runs.items()
                    if run_id is None or run == run_id
                }
                if not runs:
                    continue
                findings.append(
                    Finding(
                        check=check.name,
                        rule=rule_code(check.rule),
                        title=check.title,
                        count=sum(entry.count for entry in runs.values()),
                        unit=check.unit,
                        runs=list(runs),
                        example=next(iter(runs.values())).example,
                        fix=check.fix,
                    )
                )
            return CheckReport(
                observed=self.observed.model_copy(),
                findings=findings,
                dropped=self.dropped,
                check_errors=dict(self.errors),
            )

    def close(self) -> None:
        if self._thread is not None:
            # When full, the daemon thread simply dies with the process.
            with contextlib.suppress(queue.Full):
                self._queue.put_nowait(None)


def _trainer_event(
    envelope: EventEnvelope, payload: ProtocolPayload, result: dict[str, Any] | None
) -> TrainerEvent:
    return TrainerEvent(
        run_id=envelope.metadata.run_id,
        type=envelope.type.value,
        step=envelope.metadata.step,
        index=envelope.metadata.index,
        payload=payload,
        result=result,
    )
