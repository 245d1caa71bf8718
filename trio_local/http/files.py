"""GET /files/checkpoints/{checkpoint}.tar: checkpoint archives behind signed URLs.

The SDK's downloader sends no auth headers, so the URL carries an expiring HMAC signature.
Archives are built once (atomically) and served with HTTP Range for resumed downloads.
"""

from __future__ import annotations

import asyncio
import io
import tarfile
from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response

from trio_local.errors import ApiError
from trio_local.http.common import service
from trio_local.security import verify_download
from trio_local.storage.checkpoints import ARCHIVE_FILES, resolve
from trio_local.storage.files import write_bytes_atomic

CHUNK = 1024 * 1024


def build_archive(source: Path, target: Path, name: str) -> Path:
    if target.is_file():
        return target
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for file_name in ARCHIVE_FILES:
            tar.add(source / file_name, arcname=f"{name}/{file_name}")
    write_bytes_atomic(target, buffer.getvalue())
    return target


def parse_range(header: str, size: int) -> tuple[int, int] | None:
    """(start, end inclusive) of a single `bytes=N-[M]` range, or None for the whole file."""
    if not header.startswith("bytes="):
        return None
    first = header[6:].split(",", maxsplit=1)[0].strip()
    start_text, _, end_text = first.partition("-")
    if not start_text.isdigit():
        return None
    start = int(start_text)
    end = int(end_text) if end_text.isdigit() else size - 1
    return start, min(end, size - 1)


async def download(request: Request) -> Response:
    state = service(request)
    ident = request.path_params["checkpoint"]
    query = request.query_params
    if not verify_download(state.secret, ident, query.get("expires", ""), query.get("sig", "")):
        raise ApiError(403, "forbidden", "download URL is invalid or expired; request a new one")
    row = state.store.checkpoint(ident)
    source = resolve(state.data_dir, row["path"]) if row is not None else None
    if row is None or source is None or not source.is_dir():
        raise ApiError(404, "checkpoint_not_found", f"checkpoint '{ident}' does not exist")
    target = state.data_dir / "archives" / f"{ident}-{row['size_bytes']}.tar"
    archive = await asyncio.to_thread(build_archive, source, target, row["name"])
    data = archive.read_bytes()
    size = len(data)
    wanted = parse_range(request.headers.get("range", ""), size)
    headers = {"accept-ranges": "bytes", "content-type": "application/x-tar"}
    if wanted is None:
        return Response(data, headers=headers)
    start, end = wanted
    if start >= size:
        return Response(status_code=416, headers={**headers, "content-range": f"bytes */{size}"})
    headers["content-range"] = f"bytes {start}-{end}/{size}"
    return Response(data[start : end + 1], status_code=206, headers=headers)
