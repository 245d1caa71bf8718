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

# One import at a time, but a thread that waits for a library is released as soon as that
# library is in: with a plain lock, the thread that has just imported transformers takes the
# lock straight back for peft (locks are not fair), and a tokenizer load waiting for
# transformers then waits for the whole import of peft too.
_changed = threading.Condition()
_importing: set[str] = set()  # the one library being imported, if any
_imported: set[str] = set()  # fully imported (sys.modules also holds half-imported modules)


def import_model_libraries(*names: Library, stop: threading.Event | None = None) -> bool:
    """Import `names` (all three when none is given). A tokenizer needs transformers only, so
    a broken peft install fails the model build with its cause, not the tokenizer too. With
    `stop`, no import begins once it is set (a stopping service waits for one import at most);
    returns whether every library is in."""
    for name in names or ALL:
        with _changed:
            _changed.wait_for(lambda name=name: name in _imported or not _importing)
            if name in _imported:
                continue
            if stop is not None and stop.is_set():  # set while waiting for another import
                return False
            _importing.add(name)
        try:
            importlib.import_module(name)
            _imported.add(name)
        finally:
            with _changed:
                _importing.discard(name)
                _changed.notify_all()
    return True
