"""The model libraries (torch, transformers, peft), imported one thread at a time.

The service imports them on background threads (the warm-up's builder, the tokenizer build and
preload). Two threads importing transformers at once can see it half-initialised ("cannot import
name 'AutoModel' from 'transformers'"), so every import of them goes through here first.
"""

from __future__ import annotations

import importlib
import threading
from typing import Literal

Library = Literal["torch", "transformers", "peft"]
# peft last: a tokenizer needs transformers only, and need not wait for peft's import.
ALL: tuple[Library, ...] = ("torch", "transformers", "peft")

_lock = threading.Lock()
_imported: set[str] = set()  # fully imported (sys.modules also holds half-imported modules)


def import_model_libraries(*names: Library) -> None:
    """Import `names` (all three when none is given). A tokenizer needs transformers only, so
    a broken peft install fails the model build with its cause, not the tokenizer too."""
    for name in names or ALL:
        if name in _imported:
            continue
        with _lock:
            importlib.import_module(name)
            _imported.add(name)
