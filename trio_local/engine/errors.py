"""The engine's error type, defined in the package's lowest layer (the protocol layer reads it
too) and named here where the engine's modules look for it."""

from __future__ import annotations

from trio_local.errors import EngineError, service_stopping

__all__ = ["EngineError", "service_stopping"]
