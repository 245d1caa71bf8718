"""Everything the server takes from pygls beyond its documented handler API, in one place.

Checked on pygls 2.1.1 (with lsprotocol 2025.0.0 and cattrs 26.2): `PYGLS_CHECKED`. On another
pygls release, read `send_error` and `converter` again before trusting them.

- `send_error`: pygls has no public call that answers a request with an error outside a
  handler; the transport needs one for frames pygls never sees (`JsonRPCProtocol._send_response`,
  a private method).
- `converter`: pygls's cattrs converter turns any JSON value into a string where the protocol
  wants one (`"text": null` became the text "None", so a `didChange` emptied the server's copy
  of the document); the document's own messages are checked here first, and a malformed one is
  refused as invalid params (the transport logs it), leaving the document as it was.
- `codec`: pygls's `PositionCodec` for a negotiated position encoding."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from lsprotocol import types
from pygls.protocol import default_converter
from pygls.workspace import PositionCodec

PYGLS_CHECKED = "2.1.1"


def send_error(protocol: Any, msg_id: Any, code: int, message: str) -> None:
    """Answer the request `msg_id` (None: a message without a readable id) with an error."""
    protocol._send_response(msg_id, error=types.ResponseError(code=code, message=message))


@functools.cache
def codec(encoding: str) -> PositionCodec:
    """pygls's codec for `encoding` ("utf-8", "utf-16" or "utf-32"; anything else is UTF-16,
    the protocol's default)."""
    return PositionCodec(encoding)  # a PositionEncodingKind value


# --- the document messages, checked before pygls structures them ------------------------------


class Malformed(Exception):
    """A document message the protocol's types do not allow (its text names the field)."""


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _check_text(change: Mapping[str, Any]) -> None:
    text = change.get("text")
    if not isinstance(text, str):
        raise Malformed(f"`text` must be a string, got {_kind(text)}")


def _position(value: object, field: str) -> tuple[int, int]:
    if not isinstance(value, Mapping):
        raise Malformed(f"`range.{field}` must be a position, got {_kind(value)}")
    found = []
    for part in ("line", "character"):
        number = value.get(part)
        if not isinstance(number, int) or isinstance(number, bool) or number < 0:
            raise Malformed(
                f"`range.{field}.{part}` must be a whole number of 0 or more, got {number!r}"
            )
        found.append(number)
    return found[0], found[1]


def _check_change(change: Mapping[str, Any]) -> None:
    """One entry of `contentChanges`: a string `text`, and a `range` (when given) of two
    positions of whole numbers that does not end before it starts."""
    _check_text(change)
    if "range" in change:
        span = change["range"]
        if not isinstance(span, Mapping):
            raise Malformed(f"`range` must be a range, got {_kind(span)}")
        start, end = _position(span.get("start"), "start"), _position(span.get("end"), "end")
        if end < start:
            raise Malformed("`range` ends before it starts")


def _checked(check: Callable[[Mapping[str, Any]], None], structure: Callable) -> Callable:
    def hook(value: Any, kind: type) -> Any:
        if isinstance(value, Mapping):
            check(value)
        return structure(value, kind)  # a non-mapping fails there, as before

    return hook


def converter():
    """pygls's converter, refusing the malformed document messages it would coerce."""
    made = default_converter()
    for kind, check in (
        (types.TextDocumentContentChangePartial, _check_change),
        (types.TextDocumentContentChangeWholeDocument, _check_change),
        (types.TextDocumentItem, _check_text),
    ):
        made.register_structure_hook(kind, _checked(check, made.get_structure_hook(kind)))
    return made
