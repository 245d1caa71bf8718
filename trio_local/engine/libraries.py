"""The heavy libraries (torch for the model, transformers for building a tokenizer), each
imported by one thread at a time.

The service imports them on background threads (the warm-up's builder, the tokenizer build).
Two threads importing transformers at once can see it half-initialised ("cannot import name
'AutoModel' from 'transformers'"), so every import of them goes through here first. Different
libraries may import side by side, so a tokenizer build (transformers' conversion, which does
not import torch) never waits for the model's import of torch. Where transformers does import
torch (its AutoTokenizer, for `--check`'s chat tokens), that nested import meets a gated one
only at Python's own per-module import lock, which makes the later thread wait for the whole
module: torch is not a lazy module that a second thread could see half-initialised.
"""

from __future__ import annotations

import functools
import importlib
import threading
from typing import Literal

Library = Literal["torch", "transformers"]

# A thread that waits for a library is released as soon as that library is in (a lock per
# library would also do; one condition keeps the stop check in the same wait).
_changed = threading.Condition()
_importing: set[str] = set()  # the libraries being imported
_imported: set[str] = set()  # fully imported (sys.modules also holds half-imported modules)


def _free_to_import(name: str) -> bool:
    """Whether `name` is in, or no thread is importing it (call holding `_changed`)."""
    return name in _imported or name not in _importing


def import_model_libraries(*names: Library, stop: threading.Event | None = None) -> bool:
    """Import `names`, each by one thread at a time. With `stop`, no import begins once it is
    set (a stopping service waits for the imports already begun at most); returns whether
    every library is in."""
    for name in names:
        with _changed:
            _changed.wait_for(functools.partial(_free_to_import, name))
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
