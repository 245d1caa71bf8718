"""The append-only JSONL audit log: one line per tool call, never a secret or a data payload."""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from mcp_server.redact import redact

log = logging.getLogger("trio_mcp.audit")

# Identifiers an operator needs to read the log; every other string is a payload (prompts, code,
# messages) and is recorded only by its length.
_KEPT_STRINGS = frozenset(
    {
        "run_id",
        "checkpoint",
        "name",
        "base_model",
        "model",
        "loss_fn",
        "kind",
        "filename",
        "confirm",
    }
)
_SECRET_HINTS = ("key", "token", "secret", "password", "authorization")
_MAX_KEPT = 200
_MAX_KEY = 64


def summarise_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """Keep scalars and identifiers; reduce payloads to their size; drop anything secret-looking."""
    summary: dict[str, Any] = {}
    for raw_key, value in arguments.items():
        # Unknown argument names are the agent's text too: redacted and bounded like values.
        key = redact(str(raw_key))[:_MAX_KEY]
        lowered = key.lower()
        if any(hint in lowered for hint in _SECRET_HINTS) and lowered != "max_tokens":
            summary[key] = "[redacted]"
        elif value is None or isinstance(value, bool | int | float):
            summary[key] = value
        elif isinstance(value, str):
            kept = key in _KEPT_STRINGS and len(value) <= _MAX_KEPT
            # An identifier may still carry a secret an agent pasted into it.
            summary[key] = redact(value) if kept else {"chars": len(value)}
        elif isinstance(value, list | tuple):
            summary[key] = {"items": len(value)}
        elif isinstance(value, dict):
            summary[key] = {"keys": len(value)}
        else:
            summary[key] = {"type": type(value).__name__}
    return summary


class AuditLog:
    """Appends one JSON object per line; a failing disk is logged, never fatal to the call."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._dir_ready = False

    def record(
        self,
        *,
        tool: str,
        arguments: dict[str, Any],
        outcome: str,
        duration_s: float,
        budget_after: dict[str, int],
        error: str | None = None,
    ) -> None:
        entry = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + "Z",
            "tool": tool,
            "arguments": summarise_arguments(arguments),
            "outcome": outcome,
            "duration_s": round(duration_s, 4),
            "budget_after": budget_after,
        }
        if error is not None:
            entry["error"] = error[:300]
        line = json.dumps(entry, ensure_ascii=False) + "\n"
        with self._lock:
            try:
                if not self._dir_ready:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                    self._dir_ready = True
                # O_APPEND: each line lands whole at the end, even with several servers on one file.
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                try:
                    os.write(fd, line.encode("utf-8"))
                finally:
                    os.close(fd)
            except OSError as exc:
                log.warning("cannot write the audit log %s: %s", self.path, exc)
