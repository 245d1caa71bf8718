"""`trio-lint server` as a command: its options, and the message when the `lsp` extra is missing."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.trio_lint.server.lsp_helpers import TRIO_LINT


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [TRIO_LINT, "server", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_without_pygls_the_command_names_the_extra(tmp_path: Path):
    # A `pygls` package that fails to import the way a missing one does shadows the real one.
    blocker = tmp_path / "pygls"
    blocker.mkdir()
    (blocker / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'pygls'\", name='pygls')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    result = run(env=env)
    assert result.returncode == 2
    assert "pip install 'pytrio-skill[lsp]'" in result.stderr
    assert "Traceback" not in result.stderr
    # The linter itself does not need pygls.
    lint = subprocess.run(
        [TRIO_LINT, "rule", "PTR202"], capture_output=True, text=True, env=env, check=False
    )
    assert lint.returncode == 0 and "hf-lr" in lint.stdout


def test_bad_options_are_named():
    result = run("--config", "/nonexistent/pyproject.toml")
    assert result.returncode == 2 and "--config: file not found" in result.stderr
    result = run("--debounce-ms", "-1")
    assert result.returncode == 2 and "--debounce-ms" in result.stderr
    assert "stdio" in run("--help").stdout


def test_the_server_exits_when_its_client_goes_away():
    result = run()  # stdin is empty: the client closed the pipe
    assert result.returncode == 0
