"""Fixtures for the trio-lint tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project directory (with a pyproject.toml so config lookup stops here)."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    return tmp_path
