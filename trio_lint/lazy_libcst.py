"""A lazily initialised `libcst` for the command line only.

libcst takes ~0.25 s to import and the CLI needs it only to apply fixes, so rule modules can
`import libcst as cst` at the top while `trio-lint one_file.py` stays fast. Only the console
script installs it: a library that swapped another package's module in `sys.modules` would
break code in the same process that imports libcst's internals first (hypothesmith does), so
`import trio_lint` as a library (the MCP server, the flake8 plugin, editors) leaves libcst alone.
"""

from __future__ import annotations

import importlib.util
import sys
import types


class _LazyModule(types.ModuleType):
    """A package whose `__init__` runs on first attribute use. Unlike importlib's LazyLoader (which
    loads on *any* access, including the `__spec__` check every `import` statement makes), a
    plain `import libcst as cst` stays cheap; submodule imports work through `__path__`."""

    def __getattr__(self, name: str):
        loader = self.__dict__.pop("_trio_lint_loader", None)
        if loader is None:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        loader.exec_module(self)
        return getattr(self, name)


def install() -> None:
    """Put a not-yet-initialised libcst in `sys.modules` (no-op when it is imported already)."""
    if "libcst" in sys.modules:
        return
    spec = importlib.util.find_spec("libcst")
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return
    module = _LazyModule("libcst")
    module.__spec__ = spec
    module.__loader__ = spec.loader
    module.__file__ = spec.origin
    module.__path__ = list(spec.submodule_search_locations)
    module.__package__ = "libcst"
    module._trio_lint_loader = spec.loader  # type: ignore[attr-defined]
    sys.modules["libcst"] = module
