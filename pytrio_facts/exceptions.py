"""pytrio 0.2.9's exception classes: where to import each, what raises it, whether it can retry.

Only `PyTrioError` is exported at the top level (`trio.PyTrioError`); every other class is
imported from its module under `pytrio.errors`. Whether one error may be retried is not a
property of its class but of the error: `err.retryable`, which the SDK sets from the error's
code (pytrio/errors/diagnostics.py; the codes are in pytrio_facts.errors) or, for a code it
does not know, from the HTTP status (408, 429, 5xx). tests/pytrio_facts checks the classes, modules
and parents against the installed SDK.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ExceptionFact:
    name: str
    module: str  # import it as `from <module> import <name>`
    parent: str  # its direct base class
    raised_when: str
    # "never": the SDK raises it with retryable=False and its codes are not retryable;
    # "per error": read err.retryable.
    retryable: str

    @property
    def import_line(self) -> str:
        return f"from {self.module} import {self.name}"


EXCEPTION_CLASSES: tuple[ExceptionFact, ...] = (
    ExceptionFact(
        "PyTrioError",
        "pytrio",
        "Exception",
        "the base of every SDK error (`trio.PyTrioError`); not a ValueError",
        "per error",
    ),
    ExceptionFact(
        "ValidationError",
        "pytrio.errors.base",
        "PyTrioError",
        "an argument the SDK rejects before sending (`validation.*` codes); not pydantic's",
        "never",
    ),
    ExceptionFact(
        "DependencyError",
        "pytrio.errors.base",
        "PyTrioError",
        "an optional dependency is missing (torch for `forward_backward_custom`)",
        "never",
    ),
    ExceptionFact(
        "AuthError",
        "pytrio.errors.auth",
        "PyTrioError",
        "no API key, or a rejected one (`auth.*` codes)",
        "never",
    ),
    ExceptionFact(
        "ControlError",
        "pytrio.errors.control",
        "PyTrioError",
        "the base of control-plane errors (clients, runs, checkpoints, RestClient)",
        "per error",
    ),
    ExceptionFact(
        "ControlAPIError",
        "pytrio.errors.control",
        "ControlError",
        "the control API answered an error (creating a client, RestClient calls)",
        "per error",
    ),
    ExceptionFact(
        "SDKCompatibilityError",
        "pytrio.errors.control",
        "ControlError",
        "the service does not support this SDK version",
        "never",
    ),
    ExceptionFact(
        "ActorError",
        "pytrio.errors.actor",
        "PyTrioError",
        "the base of actor (trainer / sampler) errors",
        "per error",
    ),
    ExceptionFact(
        "ActorAPIError",
        "pytrio.errors.actor",
        "ActorError",
        "the actor answered an error (a sample request, a heartbeat)",
        "per error",
    ),
    ExceptionFact(
        "ActorEventSubmitError",
        "pytrio.errors.actor",
        "ActorAPIError",
        "the actor refused a training event at submission (the training client is then broken)",
        "per error",
    ),
    ExceptionFact(
        "ActorEventGetError",
        "pytrio.errors.actor",
        "ActorAPIError",
        "polling a training event's state failed",
        "per error",
    ),
    ExceptionFact(
        "EventError",
        "pytrio.errors.event",
        "PyTrioError",
        "the base of training-event errors",
        "per error",
    ),
    ExceptionFact(
        "EventFailedError",
        "pytrio.errors.event",
        "EventError",
        "a training event (forward_backward, optim_step, save...) failed on the service; the "
        "code is the service's and the client goes on",
        "per error",
    ),
    ExceptionFact(
        "EventPollingError",
        "pytrio.errors.event",
        "EventError",
        "a training event did not finish within the polling window",
        "per error",
    ),
    ExceptionFact(
        "ProtocolError",
        "pytrio.errors.protocol",
        "PyTrioError",
        "a service answer that breaks the protocol (often an SDK/service version skew)",
        "per error",
    ),
    ExceptionFact(
        "ConfigurationError",
        "pytrio.errors.protocol",
        "PyTrioError",
        "an invalid `trio.configure(...)` value",
        "never",
    ),
)


def exception_class(name: str) -> ExceptionFact:
    for fact in EXCEPTION_CLASSES:
        if fact.name == name:
            return fact
    raise KeyError(f"pytrio 0.2.9 has no exception class {name!r}")
