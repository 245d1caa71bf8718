"""Every RestClient method, checkpoint download with HTTP Range, delete, and `trio login`."""

from __future__ import annotations

import contextlib
import io
import os
import socket
import subprocess
import sys
import tarfile
import time
import tracemalloc
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pytrio.errors.base import PyTrioError

from tests.support.local import MODEL
from trio_local.http.files import Unsatisfiable, parse_range
from trio_local.http.guarded import GuardedH11Protocol


@pytest.fixture(scope="module")
def run(client):
    training = client.create_lora_training_client(base_model=MODEL, rank=4, seed=21)
    state = training.save_state("rest-state").result()
    weights = training.save_weights_for_sampler("rest-weights").result()
    sampler = client.create_sampling_client(base_model=MODEL, model_path=weights.path)
    return training, state, weights, sampler


def run_id_of(path: str) -> str:
    return path.removeprefix("trio://").split("/")[0]


def test_training_runs_and_sessions(client, run) -> None:
    _, state, _, _ = run
    rest = client.create_rest_client()
    run_id = run_id_of(state.path)
    ids = [r.training_run_id for r in rest.list_training_runs().result().training_runs]
    assert run_id in ids
    detail = rest.get_training_run(run_id).result()
    assert detail.base_model == MODEL and detail.lora_rank == 4 and detail.is_lora
    sessions = rest.list_sessions().result().sessions
    owning = [s for s in sessions if run_id in rest.get_session(s).result().training_run_ids]
    assert len(owning) == 1


def test_checkpoints_are_listed_per_run_and_per_user(client, run) -> None:
    _, state, weights, _ = run
    rest = client.create_rest_client()
    mine = rest.list_user_checkpoints().result().checkpoints
    paths = {c.checkpoint_id: c.path for c in mine}
    assert state.path in paths.values() and weights.path in paths.values()
    kinds = {c.path: c.checkpoint_type for c in mine}
    assert kinds[state.path] == "training" and kinds[weights.path] == "sampler"
    run_id = run_id_of(state.path)
    per_run = rest.list_checkpoints(run_id).result().checkpoints
    assert {c.path for c in per_run} == {state.path, weights.path}


def test_get_sampler(client, run) -> None:
    _, _, weights, _ = run
    rest = client.create_rest_client()
    sampler_ids = [
        sampler_id
        for session in rest.list_sessions().result().sessions
        for sampler_id in rest.get_session(session).result().sampler_ids
    ]
    infos = [rest.get_sampler(sampler_id).result() for sampler_id in sampler_ids]
    assert any(info.model_path == weights.path for info in infos)
    assert all(info.base_model == MODEL for info in infos)


def _checkpoint_id(client, path: str) -> str:
    rest = client.create_rest_client()
    return next(
        c.checkpoint_id for c in rest.list_user_checkpoints().result().checkpoints if c.path == path
    )


def test_download_is_a_tar_of_the_adapter_and_honours_range(client, run, tmp_path) -> None:
    _, _, weights, _ = run
    rest = client.create_rest_client()
    ident = _checkpoint_id(client, weights.path)
    url = rest.get_checkpoint_archive_url(ident).result().url
    whole = httpx.get(url).content
    with tarfile.open(fileobj=io.BytesIO(whole)) as tar:
        names = sorted(tar.getnames())
    assert names == ["rest-weights/adapter_config.json", "rest-weights/adapter_model.safetensors"]
    tail = httpx.get(url, headers={"Range": "bytes=100-"})
    assert tail.status_code == 206 and tail.content == whole[100:]
    assert tail.headers["content-range"] == f"bytes 100-{len(whole) - 1}/{len(whole)}"
    beyond = httpx.get(url, headers={"Range": f"bytes={len(whole)}-"})
    assert beyond.status_code == 416
    backwards = httpx.get(url, headers={"Range": "bytes=100-50"})  # RFC 9110: invalid
    assert backwards.status_code == 416 and not backwards.content
    assert backwards.headers["content-range"] == f"bytes */{len(whole)}"
    suffix = httpx.get(url, headers={"Range": "bytes=-10"})
    assert suffix.status_code == 206 and suffix.content == whole[-10:]
    middle = httpx.get(url, headers={"Range": f"bytes=10-19, 40-{len(whole) + 5}"})
    assert middle.status_code == 200 and middle.content == whole  # several ranges: ignored
    assert httpx.get(url.replace("sig=", "sig=x")).status_code == 403

    target = tmp_path / "adapter.tar"
    target.write_bytes(whole[:500])  # a partial earlier download: the SDK resumes it
    rest.download_checkpoint(ident, target).result()
    assert target.read_bytes() == whole
    from safetensors import safe_open

    with tarfile.open(target) as tar:
        tar.extractall(tmp_path, filter="data")
    with safe_open(tmp_path / "rest-weights/adapter_model.safetensors", "pt") as tensors:
        assert any("lora_A" in key for key in tensors.keys())  # noqa: SIM118


def test_delete_checkpoint_then_deleting_again_is_a_readable_404(client, run) -> None:
    _, state, _, _ = run
    rest = client.create_rest_client()
    ident = _checkpoint_id(client, state.path)
    run_id = run_id_of(state.path)
    rest.delete_checkpoint(run_id, ident).result()
    assert state.path not in {c.path for c in rest.list_user_checkpoints().result().checkpoints}
    with pytest.raises(PyTrioError) as error:
        rest.delete_checkpoint(run_id, ident).result()
    assert error.value.code == "checkpoint_not_found"
    assert ident in str(error.value)


def test_trio_login_with_base_url_writes_the_profile(service, tmp_path) -> None:
    trio_cli = Path(sys.executable).with_name("trio")
    env = {**os.environ, "HOME": str(tmp_path)}
    env.pop("PYTRIO_API_KEY", None)
    done = subprocess.run(
        [str(trio_cli), "login", "--api-key", service.api_key, "--base-url", service.base_url],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    config = (tmp_path / ".pytrio" / "config.toml").read_text()
    assert f'base_url = "{service.base_url}"' in config
    wrong = subprocess.run(
        [
            str(trio_cli),
            "login",
            "--api-key",
            "trio-local-wrong-key",
            "--base-url",
            service.base_url,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        input="",
    )
    assert wrong.returncode != 0


@given(first=st.integers(0, 3000), length=st.integers(-5, 3000), suffix=st.booleans())
@settings(max_examples=60, deadline=None)
def test_a_range_is_served_exactly_as_rfc_9110_reads_it(first, length, suffix) -> None:
    size = 2048
    header = f"bytes=-{length}" if suffix else f"bytes={first}-{first + length}"
    try:
        wanted = parse_range(header, size)
    except Unsatisfiable:
        assert (suffix and length <= 0) or (not suffix and (length < 0 or first >= size))
        return
    assert wanted is not None
    data = bytes(range(256)) * 8
    served = data[wanted[0] : wanted[1] + 1]
    expected = data[-length:] if suffix else data[first : first + length + 1]
    assert served == expected and served


def _raw_socket(service) -> socket.socket:
    host, port = service.base_url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=10)


def test_slow_senders_are_cut_off_and_the_service_keeps_answering(service, monkeypatch) -> None:
    """Clients sending headers a byte at a time once held their connections for good."""
    monkeypatch.setattr(GuardedH11Protocol, "header_timeout", 1.0)
    slow = [_raw_socket(service) for _ in range(20)]
    started = time.monotonic()
    closed = 0
    for _ in range(30):
        for sock in slow:
            with contextlib.suppress(OSError):
                sock.send(b"G")
        time.sleep(0.1)
    for sock in slow:
        sock.settimeout(5)
        try:
            closed += sock.recv(1) == b""
        except ConnectionResetError:
            closed += 1
        except TimeoutError:
            pass
        sock.close()
    assert closed == len(slow), (
        f"{closed} of {len(slow)} cut off after {time.monotonic() - started:.1f}s"
    )
    headers = {"X-API-Key": service.api_key}
    assert httpx.get(f"{service.base_url}/api/models", headers=headers).status_code == 200


def test_an_archive_is_streamed_from_disk_not_copied_per_connection(client, run) -> None:
    _, _, weights, _ = run
    url = (
        client.create_rest_client()
        .get_checkpoint_archive_url(_checkpoint_id(client, weights.path))
        .result()
        .url
    )
    size = len(httpx.get(url).content)  # built once, on disk
    assert size > 2 * 1024 * 1024
    tracemalloc.start()
    try:
        received = 0
        with httpx.stream("GET", url) as answer:
            for chunk in answer.iter_raw(65536):
                received += len(chunk)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert received == size
    assert peak < size / 2, f"{peak} bytes held to serve a {size}-byte archive"
