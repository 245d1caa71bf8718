"""`trio-local run` and `trio-local serve` as a user runs them, in subprocesses."""

from __future__ import annotations

import errno
import re
import signal
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
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


def _one_line_exit_2(command: list[str]) -> str:
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_a_file_as_data_dir_is_one_line_and_exit_2(tmp_path) -> None:
    file = tmp_path / "not-a-dir"
    file.write_text("x")
    for command in (["serve"], ["run", "--", "true"]):
        line = _one_line_exit_2([TRIO_LOCAL, *command[:1], "--data-dir", str(file), *command[1:]])
        assert str(file) in line and "--data-dir" in line and "file" in line


def test_a_busy_port_is_one_line_and_exit_2(tmp_path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = str(busy.getsockname()[1])
        command = [TRIO_LOCAL, "serve", "--port", port, "--data-dir", str(tmp_path)]
        line = _one_line_exit_2(command)
    assert port in line and "in use" in line and "--port" in line


@pytest.mark.parametrize(
    ("target", "error", "words"),
    [
        ("trio_local.security.write_bytes_atomic", OSError(errno.ENOSPC, "full"), "full"),
        ("trio_local.storage.lock.DataDirLock.acquire", OSError(errno.EROFS, "ro"), "read-only"),
        (
            "trio_local.storage.db.Store.__init__",
            sqlite3.OperationalError("attempt to write a readonly database"),
            "read-only",
        ),
    ],
)
def test_a_full_or_read_only_data_dir_at_start_is_one_line_and_exit_2(
    tmp_path, monkeypatch, capsys, target, error, words
) -> None:
    from trio_local import cli

    def fail(*_args, **_kwargs):
        raise error

    monkeypatch.setattr(target, fail)
    assert cli.main(["serve", "--port", "0", "--data-dir", str(tmp_path)]) == 2
    line = capsys.readouterr().err.strip()
    assert "\n" not in line and words in line and str(tmp_path) in line, line
