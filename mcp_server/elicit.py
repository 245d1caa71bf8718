"""Asking the user a question during a tool call, on either protocol era.

Up to 2025-11-25 the server sends `elicitation/create` in the middle of the call and waits. From
2026-07-28 the call answers `input_required` with the question, and the client calls again with
the answer. The retry's answer counts only if the sealed `request_state` (the SDK's
`RequestStateBoundary` seals it and binds it to this tool and these arguments) says this exact
question was asked, so a client cannot answer a question that was never put to the user.
"""

from __future__ import annotations

import hashlib
from typing import TypeVar

from mcp.server.elicitation import (
    AcceptedElicitation,
    CancelledElicitation,
    DeclinedElicitation,
    ElicitationResult,
    elicit_with_validation,
    render_elicitation_schema,
)
from mcp_types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult
from mcp_types.version import is_version_at_least
from pydantic import BaseModel, ValidationError

from mcp_server.errors import InvalidInput
from mcp_server.spec import ToolCall

T = TypeVar("T", bound=BaseModel)

INPUT_REQUIRED_VERSION = "2026-07-28"
KEY = "question"


class InputRequired(Exception):
    """Raised by `ask` on the 2026-07-28 protocol: the call's result is this question."""

    def __init__(self, result: InputRequiredResult) -> None:
        super().__init__("input required")
        self.result = result


def can_ask(call: ToolCall) -> bool:
    """The client declared form elicitation (a bare `elicitation: {}` means form)."""
    capabilities = call.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


async def ask(call: ToolCall, message: str, schema: type[T]) -> ElicitationResult[T]:
    if not is_version_at_least(call.request.protocol_version, INPUT_REQUIRED_VERSION):
        try:
            return await elicit_with_validation(
                call.request.session, message, schema, related_request_id=call.request.request_id
            )
        except ValueError as exc:
            raise InvalidInput(f"the client's answer was unusable: {exc}") from None
    asked = "asked:" + hashlib.sha256(message.encode()).hexdigest()[:32]
    answers = call.params.input_responses or {}
    answer = answers.get(KEY)
    if call.params.request_state != asked or not isinstance(answer, ElicitResult):
        question = ElicitRequest(
            params=ElicitRequestFormParams(
                message=message, requested_schema=render_elicitation_schema(schema)
            )
        )
        raise InputRequired(
            InputRequiredResult(input_requests={KEY: question}, request_state=asked)
        )
    if answer.action == "decline":
        return DeclinedElicitation()
    if answer.action == "cancel":
        return CancelledElicitation()
    try:
        return AcceptedElicitation(data=schema.model_validate(answer.content or {}))
    except ValidationError:
        raise InvalidInput("the client's answer does not match the question asked") from None
