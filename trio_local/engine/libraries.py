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
ALL: tuple[Library, ...] = ("peft", "torch", "transformers")

_lock = threading.Lock()


def import_model_libraries(*names: Library) -> None:
    """Import `names` (all three when none is given). A tokenizer needs transformers only, so
    a broken peft install fails the model build with its cause, not the tokenizer too."""
    with _lock:
        for name in names or ALL:
            importlib.import_module(name)
