"""localfs.userdirs follows the XDG Base Directory Specification."""

from __future__ import annotations

import pytest

from localfs.userdirs import app_dir, base_dir


@pytest.mark.parametrize(
    ("kind", "variable", "default"),
    [
        ("data", "XDG_DATA_HOME", ".local/share"),
        ("cache", "XDG_CACHE_HOME", ".cache"),
        ("state", "XDG_STATE_HOME", ".local/state"),
    ],
)
def test_an_absolute_variable_wins_and_a_relative_or_empty_one_is_ignored(
    monkeypatch: pytest.MonkeyPatch, tmp_path, kind, variable, default
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv(variable, str(tmp_path / "xdg"))
    assert app_dir(kind, "trio-x") == str(tmp_path / "xdg" / "trio-x")
    for ignored in ("relative/dir", ""):
        monkeypatch.setenv(variable, ignored)
        assert base_dir(kind) == str(tmp_path / "home" / default)
    monkeypatch.delenv(variable)
    assert base_dir(kind) == str(tmp_path / "home" / default)
