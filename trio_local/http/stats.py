"""GET /trio-local/stats: the clock-cycle scheduler's counters, as JSON.

trio-local's own endpoint, not part of the PyTRIO protocol: `trio-local stats` and
examples/06_async_pipeline.py read it (`trio-local run` exports its URL as
TRIO_LOCAL_STATS_URL). It holds counters and run ids only, never request payloads.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from trio_local.http.common import reply, service

STATS_PATH = "/trio-local/stats"


async def stats(request: Request) -> Response:
    state = service(request)
    snapshot = state.scheduler.stats()
    runs = snapshot["runs"]
    for run_id, entry in runs.items():
        row = state.store.training_run(run_id)
        entry["kind"] = "training" if row is not None else "sampling"
        if row is not None:
            entry["status"] = row["status"]
    return reply(snapshot)
