"""GET /trio-local/stats: the clock-cycle scheduler's counters, as JSON.

trio-local's own endpoint, not part of the PyTRIO protocol: `trio-local stats` and
examples/06_async_pipeline.py read it (`trio-local run` exports its URL as
TRIO_LOCAL_STATS_URL). It holds counters and run ids only, never request payloads, except the
`checks` report under `--check` (`?run=ID` narrows it to one run), whose examples quote a few
token ids or values of a mistake and are shown only to callers holding the API key.
"""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import Response

from trio_local.http.common import reply, service
from trio_local.security import keys_match

DRAIN_S = 30.0  # the first chat datum makes the checker load its tokenizer (seconds)


async def stats(request: Request) -> Response:
    state = service(request)
    snapshot = state.scheduler.stats()
    runs = snapshot["runs"]
    for run_id, entry in runs.items():
        row = state.store.training_run(run_id)
        entry["kind"] = "training" if row is not None else "sampling"
        if row is not None:
            entry["status"] = row.status
    if state.checks is not None:
        # Wait briefly (off the event loop) for observations already queued, then report.
        await asyncio.to_thread(state.checks.drain, DRAIN_S)
        run = request.query_params.get("run") or None
        report = state.checks.report(run).model_dump(mode="json")
        if not _has_key(request, state.api_key):
            # The examples quote the client's data: only for callers holding the API key.
            for finding in report["findings"]:
                finding["example"] = None
        snapshot["checks"] = report
    snapshot["engine_timings"] = dict(state.engine.timings)
    snapshot["warmup"] = state.engine.warm_up_status()
    return reply(snapshot)


def _has_key(request: Request, api_key: str) -> bool:
    bearer = request.headers.get("authorization", "")
    token = bearer[7:].strip() if bearer.lower().startswith("bearer ") else None
    return keys_match(request.headers.get("x-api-key") or token, api_key)
