"""The model libraries (torch, transformers, peft), imported one thread at a time.

The service imports them on background threads (the warm-up's builder, the tokenizer build and
preload). Two threads importing transformers at once can see it half-initialised ("cannot import
name 'AutoModel' from 'transformers'"), so every import of them goes through here first.
"""

from __future__ import annotations

import threading

_lock = threading.Lock()


def import_model_libraries() -> None:
    with _lock:
        import peft  # noqa: F401
        import torch  # noqa: F401
        import transformers  # noqa: F401
