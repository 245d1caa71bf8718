"""The API key, actor tokens and signed download URLs.

The API key is generated on first start and stored 0600 in the data directory. Actor tokens
and download URLs are signed (itsdangerous, HMAC-SHA256) with a separate server secret, so they
survive a restart and never contain the API key.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import stat
import string
import time
from pathlib import Path

from itsdangerous import BadData, BadSignature, Signer, TimestampSigner
from itsdangerous.encoding import base64_decode, base64_encode

from localfs.atomic import write_atomic
from trio_local.config import MIN_API_KEY_LENGTH, ConfigError

KEY_FILE = "api_key"
SECRET_FILE = "server_secret"
TOKEN_TTL_S = 24 * 3600
KEY_PREFIX = "trio-local-"


def _read_private(path: Path) -> str:
    """A secret file's text, refused when other users could read or replace it."""
    info = path.lstat()
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"{path} is not a regular file; remove it so trio-local writes a new one")
    if info.st_mode & 0o077:
        raise ConfigError(
            f"{path} is readable or writable by other users (mode "
            f"{stat.S_IMODE(info.st_mode):04o}); run `chmod 600 {path}` and start again"
        )
    return path.read_text(errors="replace")


def _read_or_create(path: Path, make: str) -> tuple[str, bool]:
    if path.exists() or path.is_symlink():
        return _read_private(path), False
    write_atomic(path, make.encode(), mode=0o600, durable=True, parents=True)
    return make, True


def check_api_key(value: str, source: str) -> str:
    """A usable key: at least MIN_API_KEY_LENGTH printable characters and no whitespace."""
    key = value.strip()
    allowed = set(string.printable) - set(string.whitespace)
    if len(key) < MIN_API_KEY_LENGTH or not set(key) <= allowed:
        raise ConfigError(
            f"{source} must hold one key of at least {MIN_API_KEY_LENGTH} printable characters "
            "without spaces; delete it to have trio-local generate one"
        )
    return key


def load_or_create_api_key(data_dir: Path) -> tuple[str, bool]:
    """The stored key, or a new one written 0600; the flag says whether it was just created."""
    path = data_dir / KEY_FILE
    value, created = _read_or_create(path, KEY_PREFIX + secrets.token_urlsafe(24))
    return check_api_key(value, f"the key file {path}"), created


def load_or_create_secret(data_dir: Path) -> bytes:
    path = data_dir / SECRET_FILE
    value, _ = _read_or_create(path, secrets.token_hex(32))
    try:
        secret = bytes.fromhex(value.strip())
    except ValueError:
        secret = b""
    if len(secret) < 32:
        raise ConfigError(
            f"{path} must hold 64 hex digits; delete it to have trio-local generate a new one "
            "(actor tokens and download URLs issued before then stop working)"
        )
    return secret


def _is_number(text: str) -> bool:
    # ASCII digits only: str.isdigit() also admits "²", which int() then refuses.
    return text.isascii() and text.isdigit() and len(text) <= 20


def keys_match(given: str | None, expected: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


# itsdangerous signs and checks (constant-time, with a key derived per salt); the salts keep an
# actor token from ever passing as a download signature and the other way round.
def _actor_signer(secret: bytes) -> TimestampSigner:
    return TimestampSigner(secret, salt="trio-local.actor-token", digest_method=hashlib.sha256)


def _download_signer(secret: bytes) -> Signer:
    return Signer(secret, salt="trio-local.download", digest_method=hashlib.sha256)


def issue_actor_token(secret: bytes, run_id: str) -> tuple[str, float]:
    """A token naming `run_id`, stamped now; it is accepted for TOKEN_TTL_S seconds."""
    signer = _actor_signer(secret)
    token = signer.sign(run_id)
    _, issued = signer.unsign(token, return_timestamp=True)
    return token.decode(), issued.timestamp() + TOKEN_TTL_S


def _written_as_signed(signature: str) -> bool:
    """Whether a signature is spelled the one way the signer spells it. Base64's last character
    carries spare bits that decoding ignores (a 32-byte HMAC is 43 characters, 2 bits spare), so
    a token whose last character was changed within them would otherwise pass as the same token:
    a string that was never issued would be accepted."""
    try:
        return base64_encode(base64_decode(signature)).decode("ascii") == signature
    except (BadData, UnicodeError, ValueError):
        return False


def verify_actor_token(secret: bytes, token: str) -> str | None:
    """The run id the token was issued for, or None if it is forged or expired."""
    if not _written_as_signed(token.rpartition(".")[2]):
        return None
    try:
        run_id = _actor_signer(secret).unsign(token, max_age=TOKEN_TTL_S)
    except (BadSignature, UnicodeError, ValueError):  # SignatureExpired is a BadSignature
        return None
    return run_id.decode("utf-8", "replace")


def sign_download(secret: bytes, checkpoint_id: str, expires: int) -> str:
    return _download_signer(secret).get_signature(f"{checkpoint_id}:{expires}").decode()


def verify_download(secret: bytes, checkpoint_id: str, expires: str, signature: str) -> bool:
    if not _is_number(expires) or int(expires) < time.time():
        return False
    if not _written_as_signed(signature):
        return False
    try:
        return _download_signer(secret).verify_signature(f"{checkpoint_id}:{expires}", signature)
    except (UnicodeError, ValueError):
        return False
