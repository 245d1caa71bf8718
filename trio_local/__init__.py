"""trio-local: an offline PyTRIO service that the real SDK talks to.

with trio_local.serve_in_background() as service:
    client = pytrio.ServiceClient()   # already pointed at service.base_url
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trio_local.background import LocalService, serve_in_background

__all__ = ["LocalService", "serve_in_background"]


def __getattr__(name: str) -> Any:
    # Imported on first use, so `import trio_local` stays cheap for the CLI and linters.
    if name in __all__:
        from trio_local import background

        return getattr(background, name)
    raise AttributeError(name)
