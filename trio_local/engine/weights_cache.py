"""The stand-ins' seeded base weights, cached on disk.

Seeding a stand-in (~40-64M parameters drawn from its own generator, most of them the
embedding) costs about half a second of CPU; reading the same weights back from a safetensors
file costs a few milliseconds. The file is keyed by everything that decides the weights (the
stand-in's shape and seed, the torch version whose generator draws them, and CACHE_VERSION for
the layout of `qwen3.CausalLM` and of this module), so a cached model is
always the one a fresh build would give, and an upgrade simply misses the cache. Files are written
to a temporary name and renamed into place; an unreadable file is deleted and the model rebuilt.
Only the newest MAX_FILES are kept.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

from trio_local.catalogue import StandInSpec

logger = logging.getLogger("trio_local")

# Bump when the stored layout or the way weights are derived from a spec changes. "2": files
# written before the seeded sections were serialised (one lock for the builder and the worker)
# may hold weights drawn under a race, and loading bumps their mtime, so they never age out. "3":
# files written by services that shared their process with other code drawing from torch's
# global generator (a test run), whose weights can differ from a fresh build.
# "4": weights drawn from a generator of the stand-in's own, not torch's global one.
# "5": the model is trio-local's `qwen3.CausalLM`, not transformers' (same names and weights;
# the key no longer holds a transformers version).
CACHE_VERSION = "5"
# ~150 MB per Qwen3-vocabulary stand-in, ~250 MB per Qwen3.5 one.
MAX_FILES = 4
# The tied unembedding is the embedding: stored once, re-tied on load.
TIED_KEY = "lm_head.weight"


def cache_key(spec: StandInSpec) -> str:
    import torch

    material = json.dumps(
        {
            "spec": dataclasses.asdict(spec),
            "torch": torch.__version__,
            "layout": CACHE_VERSION,
        },
        sort_keys=True,
    )
    return hashlib.sha256(material.encode()).hexdigest()[:24]


def cache_path(directory: Path, spec: StandInSpec) -> Path:
    return directory / f"standin-{cache_key(spec)}.safetensors"


def load(path: Path, spec: StandInSpec) -> Any | None:
    """The stand-in of `spec` stored at `path`, or None when there is no usable file there."""
    from safetensors.torch import load_file

    from trio_local.engine.qwen3 import CausalLM

    if not path.is_file():
        return None
    try:
        state = load_file(path)
        # On the meta device nothing is allocated or initialised; `assign` adopts the loaded
        # tensors as the parameters.
        model = CausalLM(spec, device="meta")
        result = model.load_state_dict(state, strict=False, assign=True)
        if result.unexpected_keys or set(result.missing_keys) - {TIED_KEY}:
            raise ValueError(f"keys do not match the model: {result.missing_keys[:3]}")
        model.retie()  # the unembedding and the rotary frequencies are not in the file
        if any(t.is_meta for t in [*model.parameters(), *model.buffers()]):
            raise ValueError("some tensors were not loaded")
    except Exception as error:  # a damaged or foreign file: rebuild rather than fail
        logger.warning("trio-local: ignoring the cached stand-in %s (%s)", path.name, error)
        path.unlink(missing_ok=True)
        return None
    os.utime(path)  # recently used: pruned last
    return model


def store(path: Path, model: Any) -> None:
    """Write `model`'s weights to `path` atomically (a failure only costs the next build)."""
    from safetensors.torch import save_file

    state = {
        key: value.contiguous() for key, value in model.state_dict().items() if key != TIED_KEY
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(prefix=".standin-", dir=path.parent)
        os.close(handle)
        staging = Path(name)
        try:
            save_file(state, staging)
            with staging.open("rb") as written:
                os.fsync(written.fileno())
            staging.replace(path)
        finally:
            staging.unlink(missing_ok=True)
        _prune(path.parent)
    except OSError as error:
        logger.warning("trio-local: cannot cache the stand-in's weights in %s: %s", path, error)


def _prune(directory: Path) -> None:
    files = sorted(
        directory.glob("standin-*.safetensors"), key=lambda p: p.stat().st_mtime, reverse=True
    )
    for old in files[MAX_FILES:]:
        old.unlink(missing_ok=True)
