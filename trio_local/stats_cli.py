"""`trio-local stats`: print a running service's per-run clock-cycle statistics."""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from typing import Any

from trio_local.config import STATS_PATH

DEFAULT_BASE_URL = "http://127.0.0.1:8765"
COLUMNS = (
    ("run", "run_id"),
    ("kind", "kind"),
    ("status", "status"),
    ("cycles", "cycles"),
    ("updates", "updates"),
    ("cycles/update", "cycles_per_update"),
    ("idle", "idle_cycles"),
    ("events", "events"),
    ("wait ms", "mean_queue_wait_ms"),
)


def stats_url(url: str | None) -> str:
    base = (
        url
        or os.environ.get("TRIO_LOCAL_STATS_URL")
        or os.environ.get("PYTRIO_BASE_URL")
        or DEFAULT_BASE_URL
    )
    base = base.rstrip("/")
    if base.endswith(STATS_PATH):
        return base
    return base.removesuffix("/api") + STATS_PATH


def fetch(url: str) -> dict[str, Any]:
    request = urllib.request.Request(url)
    # The key only unlocks the check report's examples (they quote the client's data).
    key = os.environ.get("PYTRIO_API_KEY") or os.environ.get("TRIO_LOCAL_API_KEY")
    if key:
        request.add_header("X-API-Key", key)
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def render(stats: dict[str, Any]) -> str:
    head = (
        f"cycle_ms {stats['cycle_ms']}  cycles {stats['cycles']}  idle {stats['idle_cycles']}  "
        f"queued {stats['queued']}"
    )
    rows = [[title for title, _ in COLUMNS]]
    for entry in stats["runs"].values():
        rows.append(["-" if entry.get(key) is None else str(entry.get(key)) for _, key in COLUMNS])
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in rows
    ]
    text = "\n".join([head, *(line.rstrip() for line in lines)])
    if "checks" in stats:
        from trio_local.checks.report import CheckReport

        text += "\n\n" + CheckReport.model_validate(stats["checks"]).render()
    return text


def show_stats(url: str | None, *, as_json: bool = False) -> int:
    target = stats_url(url)
    try:
        stats = fetch(target)
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        print(
            f"trio-local stats: cannot read {target}: {reason}; is `trio-local serve` running? "
            "Pass --url with its base URL",
            file=sys.stderr,
        )
        return 1
    print(json.dumps(stats, indent=2) if as_json else render(stats))
    return 0
