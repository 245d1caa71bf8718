"""The service: the parts of trio-local (store, scheduler, engine, ...) and what the HTTP routes
ask of them. `Service` is in `core.py`."""

from __future__ import annotations

from trio_local.service.core import Service

__all__ = ["Service"]
