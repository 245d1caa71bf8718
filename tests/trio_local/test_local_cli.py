"""`trio-local run` and `trio-local serve` as a user runs them, in subprocesses."""

from __future__ import annotations

import ctypes
import errno
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.support.local import MODEL, serve_until_signalled

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
        ("trio_local.security.write_atomic", OSError(errno.ENOSPC, "full"), "full"),
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


def _run(tmp_path: Path, child: str, *options: str, **popen) -> subprocess.Popen:
    """`trio-local run` of a Python child that prints its pid, then runs `child`."""
    script = f"import os, sys, time\nprint(os.getpid(), flush=True)\n{child}\n"
    command = [TRIO_LOCAL, "run", "--data-dir", str(tmp_path / "data"), *options]
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    env.pop("TORCHINDUCTOR_CACHE_DIR", None)
    return subprocess.Popen(
        [*command, "--", sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        **popen,
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text()


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGKILL, 137)])
def test_a_child_killed_by_signal_n_exits_128_plus_n(tmp_path, signum, status) -> None:
    process = _run(tmp_path, f"os.kill(os.getpid(), {int(signum)})", "--no-warmup")
    assert process.wait(120) == status


def test_sigint_to_trio_local_alone_reaches_the_child_and_stops_the_service(tmp_path) -> None:
    process = _run(tmp_path, "time.sleep(120)", "--no-warmup")
    child = int(process.stdout.readline())
    url = _child_url(child)
    process.send_signal(signal.SIGINT)  # the pid only, not its group
    assert process.wait(30) == 130  # the child died of the SIGINT it was forwarded
    assert not _alive(child)
    with pytest.raises(httpx.HTTPError):
        httpx.get(url, timeout=2)
    assert not list(tmp_path.glob("trio-local-run-*"))


def _child_url(pid: int) -> str:
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return next(v for v in environ if v.startswith(b"PYTRIO_BASE_URL=")).decode().split("=")[1]


def test_sigint_to_the_group_is_one_sigint_for_the_child_and_leaves_no_temp_dir(tmp_path) -> None:
    """The child counts the SIGINTs it gets. torch's inductor cache (made when trio-local or the
    child imports torch) goes to the run's own temporary directory, removed at the end: it once
    stayed behind as $TMPDIR/torchinductor_root."""
    child = (
        "import signal\ncount = []\n"
        "signal.signal(signal.SIGINT, lambda *_: count.append(1))\n"
        "print(os.environ['TORCHINDUCTOR_CACHE_DIR'], flush=True)\n"
        "deadline = time.time() + 120\n"
        "while not count and time.time() < deadline: time.sleep(0.05)\n"
        "time.sleep(1.0)\nprint('sigints', len(count), flush=True)\nsys.exit(7)"
    )
    process = _run(tmp_path, child, "--no-warmup", start_new_session=True)
    int(process.stdout.readline())
    cache = Path(process.stdout.readline().strip())
    assert cache.parent.parent == tmp_path and cache.parent.name.startswith("trio-local-run-")
    os.killpg(process.pid, signal.SIGINT)
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 7
    assert "sigints 1" in out
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == ["data"], left


def _signal_a_worker_thread(pid: int, signum: int) -> None:
    """Deliver `signum` to a thread of `pid` other than its main one (tgkill), as the kernel may
    do with any process-directed signal: Python runs the handler on the main thread only, and a
    main thread blocked without a timeout never gets to it."""
    tids = sorted(int(task.name) for task in Path(f"/proc/{pid}/task").iterdir())
    tids = [tid for tid in tids if tid != pid]
    assert tids, "the process has no thread besides its main one"
    libc = ctypes.CDLL(None, use_errno=True)
    for tid in reversed(tids):  # a thread may end meanwhile: the next one then takes the signal
        if libc.syscall(234, pid, tid, int(signum)) == 0:  # SYS_tgkill on x86-64
            return
    raise OSError(ctypes.get_errno(), "tgkill failed for every thread")


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the tgkill syscall number is x86-64's")
def test_sigterm_taken_by_a_worker_thread_still_stops_serve_and_writes_the_report(
    tmp_path,
) -> None:
    report = tmp_path / "report.json"
    command = [TRIO_LOCAL, "serve", "--port", "0", "--data-dir", str(tmp_path / "data")]
    command += ["--check-report", str(report)]
    returncode, stderr = serve_until_signalled(
        command, lambda process: _signal_a_worker_thread(process.pid, signal.SIGTERM), timeout=60
    )
    assert returncode == 0, stderr
    assert "no data mistakes found" in stderr
    assert report.is_file()


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the tgkill syscall number is x86-64's")
def test_sigterm_taken_by_a_worker_thread_of_run_still_reaches_the_child(tmp_path) -> None:
    process = _run(tmp_path, "time.sleep(120)")
    try:
        child = int(process.stdout.readline())
        _signal_a_worker_thread(process.pid, signal.SIGTERM)
        assert process.wait(60) == 143  # the child died of the SIGTERM it was forwarded
        assert not _alive(child)
    finally:
        process.kill()
        process.wait(30)


def _scratch_dirs(tmp_path: Path) -> list[str]:
    return sorted(path.name for path in tmp_path.glob("trio-local-run-*"))


def test_a_killed_trio_local_takes_its_child_with_it_and_the_next_run_its_temp_dir(
    tmp_path,
) -> None:
    """A SIGKILL skips every `finally`: its temp dir once stayed for good."""
    process = _run(tmp_path, "time.sleep(120)", "--no-warmup")
    child = int(process.stdout.readline())
    killed = _scratch_dirs(tmp_path)
    process.kill()
    process.wait(10)
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(child), "the child outlived trio-local"
    assert len(killed) == 1 and _scratch_dirs(tmp_path) == killed
    after = _run(tmp_path, "pass", "--no-warmup")
    assert after.wait(120) == 0
    assert _scratch_dirs(tmp_path) == []  # the killed run's, then its own


def test_a_live_runs_temp_dir_is_kept_by_the_next_run(tmp_path, monkeypatch) -> None:
    from trio_local import scratch

    monkeypatch.setattr(scratch.tempfile, "tempdir", str(tmp_path))
    old = tmp_path / f"{scratch.PREFIX}old-version"  # no lock: removed once an hour old
    old.mkdir()
    with scratch.scratch_directory() as live:
        assert scratch.remove_stale() == []  # held by this run; the unlocked one is new
        os.utime(old, (0, 0))
        assert scratch.remove_stale() == [old]
        assert live.is_dir()
    assert _scratch_dirs(tmp_path) == []
