"""Reading a checkpoint's files without trusting them.

A data directory can be restored from a tar, edited by hand or damaged by a disk: a file may
be a FIFO (safetensors' `open()` would block the whole process, holding the GIL, until a writer
comes), a device, a link out of the data directory, truncated, padded, or carry a header that
claims 2**63 bytes. Every file is checked here before its bytes are used: a regular file inside
the data directory (checked by `stat`, then again on the open descriptor), at most the size the
caller allows, a safetensors header whose length, dtypes, shapes and offsets agree with the
file, finite values, and the SHA-256 recorded when trio-local wrote it. A refusal is a
`CheckpointDamaged` naming the file and the cause; the engine adds the checkpoint's URI.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import stat
from pathlib import Path
from typing import Any

# A checkpoint's header lists ~30 tensors in ~4 KB; safetensors itself allows 100 MB.
HEADER_MAX = 1024 * 1024
JSON_MAX = 1024 * 1024
FLOAT_DTYPES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2}
_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class CheckpointDamaged(Exception):
    """A checkpoint file that cannot be used: `file` is its name, `cause` says why."""

    def __init__(self, file: str, cause: str) -> None:
        super().__init__(f"{file} {cause}")
        self.file = file
        self.cause = cause


def _kind(mode: int) -> str:
    return next((words for test, words in _KINDS if test(mode)), "not a regular file")


def read_regular(path: Path, data_dir: Path, max_bytes: int) -> bytes:
    """The bytes of `path`, a regular file inside `data_dir` of at most `max_bytes`."""
    name = path.name
    try:
        real = path.resolve(strict=True)
        if not real.is_relative_to(data_dir.resolve()):
            raise CheckpointDamaged(name, "is a link to a file outside the data directory")
        mode = real.stat().st_mode
        if not stat.S_ISREG(mode):
            raise CheckpointDamaged(name, f"is {_kind(mode)}, not a file")
        # O_NONBLOCK: should it have become a FIFO since the stat, the open cannot block.
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except FileNotFoundError:
        raise CheckpointDamaged(name, "is missing") from None
    except (OSError, RuntimeError) as error:  # RuntimeError: a symlink loop
        reason = getattr(error, "strerror", None) or str(error)
        raise CheckpointDamaged(name, f"cannot be read ({reason})") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise CheckpointDamaged(name, f"is {_kind(info.st_mode)}, not a file")
        if info.st_size > max_bytes:
            raise CheckpointDamaged(
                name,
                f"is {info.st_size} bytes, more than the {max_bytes} a checkpoint of its "
                "configuration can hold",
            )
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise CheckpointDamaged(name, f"grew past {max_bytes} bytes while it was read")
    return data


def _no_constant(text: str) -> Any:
    raise ValueError(f"{text} is not a JSON number")


def parse_json(name: str, data: bytes) -> dict[str, Any]:
    """A JSON object (no NaN or Infinity, bounded nesting)."""
    try:
        value = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
        raise CheckpointDamaged(name, f"is not valid JSON ({str(error)[:120]})") from None
    if not isinstance(value, dict):
        raise CheckpointDamaged(name, f"holds a JSON {type(value).__name__}, not an object")
    return value


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_digest(name: str, data: bytes, recorded: object) -> None:
    """`recorded` is the SHA-256 written with the checkpoint (None: an older trio-local's)."""
    if recorded is not None and digest(data) != recorded:
        raise CheckpointDamaged(name, "differs from the file trio-local saved (SHA-256 mismatch)")


def _header(name: str, data: bytes) -> tuple[dict[str, Any], int]:
    """The safetensors header, checked against the file, and where the tensor bytes start."""
    if len(data) < 8:
        raise CheckpointDamaged(name, f"is truncated ({len(data)} bytes, no safetensors header)")
    length = int.from_bytes(data[:8], "little")
    if length > len(data) - 8:
        raise CheckpointDamaged(
            name,
            f"is truncated or its header is damaged: the header claims {length} bytes, the file "
            f"has {len(data) - 8} after its length",
        )
    if length > HEADER_MAX:
        raise CheckpointDamaged(name, f"has a {length}-byte header, over {HEADER_MAX}")
    header = parse_json(f"{name}'s header", data[8 : 8 + length])
    return header, 8 + length


def _span(name: str, key: str, entry: object, body: int) -> tuple[int, int]:
    bad = CheckpointDamaged(name, f"has a damaged header entry for {key[:60]!r}")
    if not isinstance(entry, dict) or entry.get("dtype") not in FLOAT_DTYPES:
        raise bad
    shape, offsets = entry.get("shape"), entry.get("data_offsets")
    if not isinstance(shape, list) or not isinstance(offsets, list) or len(offsets) != 2:
        raise bad
    numbers = [*shape, *offsets]
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in numbers):
        raise bad
    begin, end = offsets
    if not begin <= end <= body or end - begin != math.prod(shape) * FLOAT_DTYPES[entry["dtype"]]:
        raise CheckpointDamaged(name, f"has offsets for {key[:60]!r} that do not fit the file")
    return begin, end


def parse_tensors(name: str, data: bytes) -> dict[str, Any]:
    """The float tensors of a safetensors file, every one finite."""
    import torch
    from safetensors.torch import load

    header, start = _header(name, data)
    body = len(data) - start
    spans = sorted(
        _span(name, key, entry, body) for key, entry in header.items() if key != "__metadata__"
    )
    position = 0
    for begin, end in spans:  # safetensors' own rule: the tensors tile the body exactly
        if begin != position:
            raise CheckpointDamaged(name, "has tensors that overlap or leave gaps")
        position = end
    if position != body:
        raise CheckpointDamaged(name, f"has {body - position} bytes past its last tensor")
    try:
        tensors = load(data)
    except Exception as error:  # safetensors raises its own error type
        raise CheckpointDamaged(name, f"cannot be read ({type(error).__name__}: {error})") from None
    for key, tensor in tensors.items():
        if not bool(torch.isfinite(tensor).all()):
            raise CheckpointDamaged(name, f"holds non-finite values (NaN or inf) in {key}")
    return tensors
