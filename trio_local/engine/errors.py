"""Errors the engine reports to clients: each becomes a failed event or a 4xx with its code."""

from __future__ import annotations


class EngineError(Exception):
    """A deterministic failure of one request; `code` is what the SDK shows as the error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
