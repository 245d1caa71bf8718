"""The API key, actor tokens and signed download URLs.

The API key is generated on first start and stored 0600 in the data directory. Actor tokens
and download URLs are HMAC-signed with a separate server secret, so they survive a restart and
never contain the API key.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from pathlib import Path

from trio_local.storage.files import write_bytes_atomic

KEY_FILE = "api_key"
SECRET_FILE = "server_secret"
TOKEN_TTL_S = 24 * 3600
KEY_PREFIX = "trio-local-"


def _read_or_create(path: Path, make: str) -> tuple[str, bool]:
    if path.is_file():
        return path.read_text().strip(), False
    write_bytes_atomic(path, make.encode(), mode=0o600)
    return make, True


def load_or_create_api_key(data_dir: Path) -> tuple[str, bool]:
    """The stored key, or a new one written 0600; the flag says whether it was just created."""
    return _read_or_create(data_dir / KEY_FILE, KEY_PREFIX + secrets.token_urlsafe(24))


def load_or_create_secret(data_dir: Path) -> bytes:
    value, _ = _read_or_create(data_dir / SECRET_FILE, secrets.token_hex(32))
    return bytes.fromhex(value)


def keys_match(given: str | None, expected: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


def _sign(secret: bytes, message: str) -> str:
    digest = hmac.new(secret, message.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def issue_actor_token(secret: bytes, run_id: str, now: float | None = None) -> tuple[str, float]:
    expires = int((now or time.time()) + TOKEN_TTL_S)
    body = f"{run_id}.{expires}"
    return f"{body}.{_sign(secret, body)}", float(expires)


def verify_actor_token(secret: bytes, token: str) -> str | None:
    """The run id the token was issued for, or None if it is forged or expired."""
    try:
        run_id, expires, signature = token.rsplit(".", 2)
    except ValueError:
        return None
    if not hmac.compare_digest(signature, _sign(secret, f"{run_id}.{expires}")):
        return None
    if not expires.isdigit() or int(expires) < time.time():
        return None
    return run_id


def sign_download(secret: bytes, checkpoint_id: str, expires: int) -> str:
    return _sign(secret, f"download:{checkpoint_id}:{expires}")


def verify_download(secret: bytes, checkpoint_id: str, expires: str, signature: str) -> bool:
    if not expires.isdigit() or int(expires) < time.time():
        return False
    return hmac.compare_digest(signature, sign_download(secret, checkpoint_id, int(expires)))
