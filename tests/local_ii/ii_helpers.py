"""Helpers for trio-local II tests: a service with any ServeConfig option, its stats."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from trio_local.background import LocalService, serve_in_background

MODEL = "Qwen/Qwen3-4B-Instruct-2507"

# A service with any ServeConfig option (cycle_ms=, max_training_runs=, heartbeat_timeout_s=...),
# this process's SDK pointed at it.
local_service = serve_in_background


def read_stats(service: LocalService) -> dict[str, Any]:
    with urllib.request.urlopen(service.env["TRIO_LOCAL_STATS_URL"], timeout=10) as response:
        return json.load(response)
