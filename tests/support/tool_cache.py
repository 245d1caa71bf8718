"""Tools the suite installs for itself (npm packages, built wheels), kept between runs.

Under $PYTRIO_SKILL_TEST_CACHE, else ~/.cache/pytrio-skill-tests: a prefix per exact package
list, installed once under a file lock (pytest-xdist workers may ask at the same time) and
marked complete only after the install succeeded, so a killed install is redone, not trusted."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

NPM_TIMEOUT = 900


def cache_dir() -> Path:
    base = (
        os.environ.get("PYTRIO_SKILL_TEST_CACHE") or Path.home() / ".cache" / "pytrio-skill-tests"
    )
    return Path(base)


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive lock on `path`.lock, across processes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.with_name(f"{path.name}.lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def npm_prefix(name: str, packages: tuple[str, ...], *needed: str) -> Path:
    """An npm prefix holding exactly `packages` (install once, reused across runs), whose
    `needed` paths exist; the test is skipped, with npm's words, when npm cannot install them."""
    prefix = cache_dir() / name
    complete = prefix / ".complete"
    with locked(prefix):
        if not complete.exists() or complete.read_text() != "\n".join(packages):
            npm = shutil.which("npm")
            if npm is None:
                pytest.skip(f"npm is not installed: {' '.join(packages)} cannot be installed")
            shutil.rmtree(prefix, ignore_errors=True)
            prefix.mkdir(parents=True)
            process = subprocess.run(
                [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", *packages],
                env={**os.environ, "npm_config_cache": str(cache_dir() / "npm-cache")},
                capture_output=True,
                text=True,
                timeout=NPM_TIMEOUT,
                check=False,
            )
            missing = [path for path in needed if not (prefix / path).exists()]
            if process.returncode != 0 or missing:
                pytest.skip(f"npm could not install {' '.join(packages)}: {process.stderr[-800:]}")
            complete.write_text("\n".join(packages))
    return prefix
