"""Keep API keys and bearer tokens out of every result, error and log line."""

from __future__ import annotations

import logging
import re
import threading

_lock = threading.Lock()
_known: set[str] = set()
_PATTERNS = (
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(
        r"(?i)((?:api[_-]?key|token|authorization)[\"']?\s*[:=]\s*[\"']?)"
        r"(?!bearer\b|\[redacted\])[^\s\"',}]{6,}"
    ),
)


def remember_secret(value: str | None) -> None:
    """Register a secret (the API key in use, the HTTP bearer token) so `redact` removes it."""
    if value and len(value) >= 6:
        with _lock:
            _known.add(value)


def redact(text: str) -> str:
    with _lock:
        secrets = sorted(_known, key=len, reverse=True)
    for secret in secrets:
        text = text.replace(secret, "[redacted]")
    for pattern in _PATTERNS:
        text = pattern.sub(r"\1[redacted]", text)
    return text


class RedactingFormatter(logging.Formatter):
    """Every log line, traceback included, passes through `redact` before it is written."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))
