"""HTTP-facing errors, rendered as the `{"code", "message"}` bodies the SDK shows users.

Deterministic failures must be 4xx: the SDK retries 408, 429 and 5xx for up to 15 minutes.
"""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details

    def body(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, **self.details}


def not_found(kind: str, ident: str, hint: str = "") -> ApiError:
    code = f"{kind.replace(' ', '_')}_not_found"
    return ApiError(404, code, f"{kind} '{ident}' does not exist{hint}")
