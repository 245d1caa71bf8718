"""The two kinds of refusal, at the bottom of the package so every layer can raise them.

`ApiError` is an HTTP answer, rendered as the `{"code", "message"}` body the SDK shows users.
Deterministic failures must be 4xx: the SDK retries 408, 429 and 5xx for up to 15 minutes.
`EngineError` is the failure of one accepted event or request: a `failed` event response (the
SDK raises `EventFailedError` for that call only) or a 4xx with its code.
"""

from __future__ import annotations

from typing import Any

# pytrio 0.2.9's diagnostics know this code: "The service hit a storage error." (a full disk or
# a read-only data dir, named by storage/faults.py)
STORAGE_CODE = "database_error"


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details

    def body(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, **self.details}


class EngineError(Exception):
    """A deterministic failure of one request; `code` is what the SDK shows as the error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def service_stopping(what: str = "the request") -> EngineError:
    """What work the service had not begun when it was told to stop gets (a 4xx: not retried)."""
    return EngineError("service_stopping", f"trio-local is stopping; {what} was not run")


def not_found(kind: str, ident: str, hint: str = "") -> ApiError:
    code = f"{kind.replace(' ', '_')}_not_found"
    return ApiError(404, code, f"{kind} '{ident}' does not exist{hint}")
