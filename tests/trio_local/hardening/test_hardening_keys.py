"""The stored API key and server secret: private files holding real keys, or no start."""

from __future__ import annotations

from pathlib import Path

import pytest

import trio_local
from trio_local.config import ConfigError


def _serve(data_dir: Path) -> None:
    with trio_local.serve_in_background(data_dir=data_dir, configure_sdk=False):
        pass


def test_a_key_file_other_users_can_read_is_refused_with_the_fix(tmp_path: Path) -> None:
    key = tmp_path / "api_key"
    key.write_text("trio-local-a-good-long-key")
    key.chmod(0o644)
    with pytest.raises(ConfigError, match=r"mode 0644.*chmod 600"):
        _serve(tmp_path)
    key.chmod(0o600)
    _serve(tmp_path)  # fixed as the message says


@pytest.mark.parametrize("content", ["x", "   \n", "", "two words here", "short"])
def test_a_key_file_without_a_real_key_is_refused(tmp_path: Path, content: str) -> None:
    key = tmp_path / "api_key"
    key.write_text(content)
    key.chmod(0o600)
    with pytest.raises(ConfigError, match="at least 8 printable characters"):
        _serve(tmp_path)


def test_a_damaged_server_secret_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "server_secret"
    secret.write_text("not hex")
    secret.chmod(0o600)
    with pytest.raises(ConfigError, match="64 hex digits"):
        _serve(tmp_path)


def test_a_symlinked_key_file_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("trio-local-a-good-long-key")
    elsewhere.chmod(0o600)
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / "api_key").symlink_to(elsewhere)
    with pytest.raises(ConfigError, match="not a regular file"):
        _serve(data_dir)


def test_a_new_key_file_is_private_and_reused(tmp_path: Path) -> None:
    with trio_local.serve_in_background(data_dir=tmp_path, configure_sdk=False) as first:
        pass
    assert (tmp_path / "api_key").stat().st_mode & 0o777 == 0o600
    with trio_local.serve_in_background(data_dir=tmp_path, configure_sdk=False) as second:
        assert second.api_key == first.api_key
