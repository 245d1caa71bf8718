"""GET /trio-local/stats: the clock-cycle scheduler's counters, as JSON.

trio-local's own endpoint, not part of the PyTRIO protocol: `trio-local stats` and
examples/06_async_pipeline.py read it (`trio-local run` exports its URL as
TRIO_LOCAL_STATS_URL). It holds counters and run ids only, never request payloads, except the
`checks` report under `--check` (`?run=ID` narrows it to one run), whose examples quote a few
token ids or values of a mistake and are shown only to callers holding the API key.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from trio_local.http.common import reply, service
from trio_local.security import keys_match


async def stats(request: Request) -> Response:
    state = service(request)
    run = request.query_params.get("run") or None
    # The check report's examples quote the client's data: only for callers holding the key.
    with_examples = _has_key(request, state.api_key)
    return reply(await state.stats.snapshot(run, with_examples=with_examples))


def _has_key(request: Request, api_key: str) -> bool:
    bearer = request.headers.get("authorization", "")
    token = bearer[7:].strip() if bearer.lower().startswith("bearer ") else None
    return keys_match(request.headers.get("x-api-key") or token, api_key)
