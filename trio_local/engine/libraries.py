"""The model libraries (torch, transformers, peft), imported one thread at a time.

The service imports them on background threads (the warm-up's builder, the tokenizer build and
preload). Two threads importing transformers at once can see it half-initialised ("cannot import
name 'AutoModel' from 'transformers'"), so every import of them goes through here first.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from typing import Literal

Library = Literal["torch", "transformers", "peft"]
# peft last: a tokenizer needs transformers only, and need not wait for peft's import.
ALL: tuple[Library, ...] = ("torch", "transformers", "peft")

# One import at a time, but a thread that waits for a library is released as soon as that
# library is in: with a plain lock, the thread that has just imported transformers takes the
# lock straight back for peft (locks are not fair), and a tokenizer load waiting for
# transformers then waits for the whole import of peft too.
_changed = threading.Condition()
_importing: set[str] = set()  # the one library being imported, if any
_imported: set[str] = set()  # fully imported (sys.modules also holds half-imported modules)
# torch's CPU allocator asks for transparent huge pages (madvise) for allocations of 2 MB and more
# when this is set. A training pass allocates its logits slices afresh at every step (up to
# 128 MB each, trio_local.engine.model.SLICE_ELEMENTS); on 4 KB pages a good part of that step
# went to page faults (tests/local/test_local_sft.py alone: 3.2M minor faults -> 0.55M, 46 -> 36
# CPU-seconds). torch reads the variable once, at its first allocation, so it is set before the
# import; a value the user set (0 turns it off) is kept.
HUGE_PAGES_VARIABLE = "THP_MEM_ALLOC_ENABLE"


def import_model_libraries(*names: Library) -> None:
    """Import `names` (all three when none is given). A tokenizer needs transformers only, so
    a broken peft install fails the model build with its cause, not the tokenizer too."""
    for name in names or ALL:
        with _changed:
            _changed.wait_for(lambda name=name: name in _imported or not _importing)
            if name in _imported:
                continue
            _importing.add(name)
        try:
            if name == "torch" and "torch" not in sys.modules:
                os.environ.setdefault(HUGE_PAGES_VARIABLE, "1")
            importlib.import_module(name)
            _imported.add(name)
        finally:
            with _changed:
                _importing.discard(name)
                _changed.notify_all()
