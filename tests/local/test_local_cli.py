"""`trio-local run` and `trio-local serve` as a user runs them, in subprocesses."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
from local_helpers import MODEL

TRIO_LOCAL = str(Path(sys.executable).with_name("trio-local"))

CHILD = """
import os, sys
import pytrio as trio
trio.configure_observability(enabled=False)
client = trio.ServiceClient()
print("models:", client.get_supported_models()[0])
print("url:", os.environ["PYTRIO_BASE_URL"])
sys.exit(3)
"""


def test_run_serves_the_child_and_exits_with_its_code(tmp_path) -> None:
    done = subprocess.run(
        [TRIO_LOCAL, "run", "--data-dir", str(tmp_path), "--", sys.executable, "-c", CHILD],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 3, done.stderr
    assert f"models: {MODEL}" in done.stdout
    assert re.search(r"url: http://127\.0\.0\.1:\d+", done.stdout)


def test_run_without_a_command_is_a_usage_error(tmp_path) -> None:
    done = subprocess.run(
        [TRIO_LOCAL, "run", "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "COMMAND" in done.stderr


def test_run_refuses_a_public_bind_without_a_key(tmp_path) -> None:
    done = subprocess.run(
        [TRIO_LOCAL, "run", "--host", "0.0.0.0", "--data-dir", str(tmp_path), "--", "true"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "--api-key" in done.stderr


def _serve(data_dir: Path) -> tuple[subprocess.Popen, list[str]]:
    process = subprocess.Popen(
        [TRIO_LOCAL, "serve", "--port", "0", "--data-dir", str(data_dir)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    lines = [process.stdout.readline() for _ in range(2)]
    return process, lines


def test_serve_prints_the_url_and_the_key_only_on_first_start(tmp_path) -> None:
    process, lines = _serve(tmp_path)
    try:
        url = re.search(r"(http://127\.0\.0\.1:\d+)", lines[0]).group(1)
        key = (tmp_path / "api_key").read_text()
        assert key in lines[1]
        assert httpx.get(url + "/").status_code == 200
        verify = httpx.get(url + "/api/openapi/v1/api-key/verify", headers={"X-API-Key": key})
        assert verify.status_code == 200
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(30) == 0
    process, lines = _serve(tmp_path)
    try:
        assert key not in "".join(lines)
        assert "stored in" in lines[1]
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(30)
