"""Content and settings digests (cache keys; not a security boundary).

BLAKE2b from CPython's built-in `_blake2` module: importing `hashlib` initialises OpenSSL, which
costs a few milliseconds on every start of a tool an agent runs after each edit."""

from __future__ import annotations

try:
    from _blake2 import blake2b
except ImportError:  # another Python implementation
    from hashlib import blake2b


def digest(data: bytes | str, size: int = 16) -> str:
    """Hex BLAKE2b digest of `size` bytes (strings are UTF-8 encoded)."""
    if isinstance(data, str):
        data = data.encode()
    return blake2b(data, digest_size=size).hexdigest()
