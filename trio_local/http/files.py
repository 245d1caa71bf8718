"""GET /files/checkpoints/{checkpoint}.tar: checkpoint archives behind signed URLs.

The SDK's downloader sends no auth headers, so the URL carries an expiring signature.
Archives are built once (atomically, on disk, by service/checkpoints.py) and streamed from the
file a chunk at a time, so a connection costs a chunk of memory, not the archive; a single HTTP
range (RFC 9110, section 14) resumes a download.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from trio_local.errors import ApiError
from trio_local.http.common import service
from trio_local.security import verify_download

CHUNK = 256 * 1024
RANGE_SPEC = re.compile(r"(\d*)-(\d*)")


class Unsatisfiable(Exception):
    """A range the archive cannot serve: answered 416 with the archive's size."""


def parse_range(header: str, size: int) -> tuple[int, int] | None:
    """(first, last inclusive) of a single byte range, or None to send the whole archive.

    RFC 9110: a unit other than bytes, or several ranges, may be ignored (the whole archive is
    sent); `first-` runs to the end, `-N` is the last N bytes, a last past the end is cut to
    it. Raises Unsatisfiable for a range that is invalid (`100-50`) or starts past the end.
    """
    unit, _, specs = header.partition("=")
    if unit.strip().lower() != "bytes" or "," in specs:
        return None
    match = RANGE_SPEC.fullmatch(specs.strip())
    if match is None:
        raise Unsatisfiable
    first_text, last_text = match.groups()
    if not first_text:  # a suffix: the last N bytes
        if not last_text or int(last_text) == 0 or size == 0:
            raise Unsatisfiable
        return max(size - int(last_text), 0), size - 1
    first = int(first_text)
    last = int(last_text) if last_text else size - 1
    if last < first or first >= size:
        raise Unsatisfiable
    return first, min(last, size - 1)


def _read(path: Path, first: int, last: int) -> Iterator[bytes]:
    """The bytes first..last of `path`, a chunk at a time (run on a worker thread)."""
    with path.open("rb") as handle:
        handle.seek(first)
        left = last - first + 1
        while left > 0:
            chunk = handle.read(min(CHUNK, left))
            if not chunk:
                return
            left -= len(chunk)
            yield chunk


async def download(request: Request) -> Response:
    state = service(request)
    ident = request.path_params["checkpoint"]
    query = request.query_params
    if not verify_download(state.secret, ident, query.get("expires", ""), query.get("sig", "")):
        raise ApiError(403, "forbidden", "download URL is invalid or expired; request a new one")
    archive = await state.checkpoints.archive(ident)
    size = archive.stat().st_size
    headers = {"accept-ranges": "bytes", "content-type": "application/x-tar"}
    try:
        wanted = parse_range(request.headers.get("range", ""), size)
    except Unsatisfiable:
        return Response(status_code=416, headers={**headers, "content-range": f"bytes */{size}"})
    first, last, status = 0, size - 1, 200
    if wanted is not None:
        (first, last), status = wanted, 206
        headers["content-range"] = f"bytes {first}-{last}/{size}"
    headers["content-length"] = str(last - first + 1)
    # A sync iterator: Starlette reads each chunk on a worker thread, off the event loop.
    return StreamingResponse(_read(archive, first, last), status_code=status, headers=headers)
