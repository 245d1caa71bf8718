"""Checkpoints: listed, found, deleted, expired, and archived for a signed download."""

from __future__ import annotations

import asyncio
import stat
import tarfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from localfs.atomic import atomic_file
from trio_local.errors import ApiError
from trio_local.security import sign_download
from trio_local.storage import checkpoints as ckpt_files
from trio_local.storage.db import Page, Store, now
from trio_local.storage.rows import CheckpointRow

DOWNLOAD_TTL_S = 3600


@dataclass(frozen=True)
class SignedDownload:
    """What a download URL carries: the checkpoint, when the URL expires, its signature."""

    cuid: str
    expires: int
    signature: str


def build_archive(source: Path, target: Path, name: str) -> Path:
    if target.is_file():
        return target
    for file_name in ckpt_files.ARCHIVE_FILES:  # a FIFO, a device or a link is never archived
        try:
            mode = (source / file_name).lstat().st_mode
        except OSError:
            mode = 0
        if not stat.S_ISREG(mode):
            raise ApiError(
                400,
                "checkpoint_invalid",
                f"checkpoint '{name}' cannot be downloaded: {file_name} is missing or not a "
                "regular file",
            )
    with (
        atomic_file(target, mode=0o644, durable=True, parents=True) as handle,
        tarfile.open(fileobj=handle, mode="w") as tar,
    ):
        for file_name in ckpt_files.ARCHIVE_FILES:
            tar.add(source / file_name, arcname=f"{name}/{file_name}")
    return target


class Checkpoints:
    def __init__(self, store: Store, data_dir: Path, secret: bytes) -> None:
        self._store = store
        self._data_dir = data_dir
        self._secret = secret

    def sweep_expired(self) -> None:
        """Delete checkpoints whose TTL has passed (temporary sampler weights)."""
        moment = now()
        for row in self._store.all_checkpoints():
            if row.expires_at and datetime.fromisoformat(row.expires_at) <= moment:
                self.delete(row)

    def delete(self, row: CheckpointRow) -> None:
        ckpt_files.delete_checkpoint(self._store, self._data_dir, row)
        for archive in (self._data_dir / ckpt_files.ARCHIVES_DIR).glob(f"{row.cuid}-*.tar"):
            archive.unlink(missing_ok=True)

    def page(self, run_cuid: str | None, limit: int, offset: int) -> Page[CheckpointRow]:
        """The user's checkpoints (or one run's), expired ones gone first."""
        self.sweep_expired()
        return self._store.checkpoints(run_cuid, limit, offset)

    def get(self, ident: str) -> CheckpointRow:
        self.sweep_expired()
        row = self._store.checkpoint(ident)
        if row is None:
            raise ApiError(
                404,
                "checkpoint_not_found",
                f"checkpoint '{ident}' does not exist (deleted, expired, or never saved)",
            )
        return row

    def by_uri(self, uri: str) -> CheckpointRow | None:
        return self._store.checkpoint_by_uri(uri)

    def signed_download(self, ident: str) -> SignedDownload:
        row = self.get(ident)
        expires = int(time.time()) + DOWNLOAD_TTL_S
        return SignedDownload(row.cuid, expires, sign_download(self._secret, row.cuid, expires))

    async def archive(self, ident: str) -> Path:
        """The checkpoint's tar archive, built once (off the event loop) and kept on disk."""
        row = self._store.checkpoint(ident)
        source = ckpt_files.resolve(self._data_dir, row.path) if row is not None else None
        if row is None or source is None or not source.is_dir():
            raise ApiError(404, "checkpoint_not_found", f"checkpoint '{ident}' does not exist")
        target = self._data_dir / ckpt_files.ARCHIVES_DIR / f"{ident}-{row.size_bytes}.tar"
        return await asyncio.to_thread(build_archive, source, target, row.name)
