"""A checkpoint is checked whole before anything uses it: each case once seen in a fault run,
refused with a non-retryable code naming the checkpoint, the file and the cause (the engine in
this process; one case needs a `trio-local serve` of its own, because it froze the service)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import torch
from pytrio.protocol.actor.sampling_run.sample import SampleRequest
from safetensors.torch import load, save

from tests.trio_local.hardening.engine_harness import MODEL, Harness, resign, trained
from tests.trio_local.hardening.wire import V1, Wire, body_of, sample_body
from trio_local.background import LocalService
from trio_local.config import ServeConfig
from trio_local.errors import EngineError
from trio_local.service import Service
from trio_local.storage.checkpoints import (
    ADAPTER_CONFIG,
    ADAPTER_FILE,
    ARCHIVES_DIR,
    OPTIMIZER_FILE,
    TRAINER_STATE,
)


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    with trained(tmp_path_factory.mktemp("data"), 1, "saved") as (running, saved):
        running.saved = saved  # type: ignore[attr-defined]
        yield running


def _copy(harness: Harness, name: str, **changes) -> tuple[str, Path]:
    return harness.copy(harness.saved, name, **changes)  # type: ignore[attr-defined]


def _refused(harness: Harness, uri: str, *, optimizer: bool = False) -> EngineError:
    with pytest.raises(EngineError) as error:
        harness.init(uri, optimizer=optimizer)
    assert uri in error.value.message, error.value.message
    return error.value


def _edit_json(path: Path, edit) -> None:
    value = json.loads(path.read_text())
    edit(value)
    path.write_text(json.dumps(value))


def _edit_tensors(directory: Path, name: str, edit) -> None:
    tensors = load((directory / name).read_bytes())
    edit(tensors)
    (directory / name).write_bytes(save(tensors))
    resign(directory)


@pytest.mark.parametrize("other", ["Qwen/Qwen3-8B", "Qwen/Qwen3.5-4B"])
def test_a_checkpoint_of_another_model_is_refused_naming_both(harness: Harness, other) -> None:
    """Once loaded silently: the adapter's shapes are the same for both ids."""
    uri, directory = _copy(harness, f"other-{other[5:]}", model_id=other)

    def rename(config: dict) -> None:
        config["trio_local"]["model_id"] = config["base_model_name_or_path"] = other

    _edit_json(directory / ADAPTER_CONFIG, rename)
    error = _refused(harness, uri)
    assert error.code == "checkpoint_model_mismatch"
    assert other in error.message and MODEL in error.message
    if "3.5" in other:
        assert "qwen3_5 vocabulary" in error.message and "qwen3 vocabulary" in error.message


def test_an_edited_model_id_in_the_config_is_noticed(harness: Harness) -> None:
    uri, directory = _copy(harness, "edited-model-id")
    _edit_json(
        directory / ADAPTER_CONFIG,
        lambda config: config["trio_local"].update(model_id="Qwen/Qwen3-8B"),
    )
    error = _refused(harness, uri)
    assert error.code == "checkpoint_invalid" and ADAPTER_CONFIG in error.message
    assert "Qwen/Qwen3-8B" in error.message


def test_missing_adapter_weights_are_refused(harness: Harness) -> None:
    """Once loaded as if whole: the missing part stayed at a fresh start."""
    uri, directory = _copy(harness, "missing-weight")
    _edit_tensors(directory, ADAPTER_FILE, lambda t: t.pop(sorted(t)[3]))
    error = _refused(harness, uri)
    assert error.code == "checkpoint_invalid" and ADAPTER_FILE in error.message
    assert "lacks 1 of the adapter's" in error.message


@pytest.mark.parametrize("name", [ADAPTER_FILE, OPTIMIZER_FILE])
def test_non_finite_weights_or_optimizer_state_are_refused(harness: Harness, name) -> None:
    """Once accepted: the next loss was NaN, which the SDK's result model rejects."""
    uri, directory = _copy(harness, f"nan-{name[:4]}")

    def poison(tensors: dict) -> None:
        key = next(key for key, value in sorted(tensors.items()) if value.numel() > 1)
        tensors[key] = tensors[key].clone()
        tensors[key].view(-1)[0] = float("nan")

    _edit_tensors(directory, name, poison)
    error = _refused(harness, uri, optimizer=True)
    assert error.code == "checkpoint_invalid"
    assert name in error.message and "non-finite" in error.message


def _other_rank(tensors: dict) -> None:
    key = next(key for key in sorted(tensors) if key.endswith("exp_avg"))
    rows, cols = tensors[key].shape
    tensors[key] = torch.zeros((8, cols) if rows == 4 else (rows, 8))


def _state(edit):
    return lambda directory: (_edit_json(directory / TRAINER_STATE, edit), resign(directory))


OPTIMIZER_DAMAGE = {
    "another rank's shapes": lambda d: _edit_tensors(d, OPTIMIZER_FILE, _other_rank),
    "an extra slot": lambda d: _edit_tensors(
        d, OPTIMIZER_FILE, lambda t: t.update({"0.max_exp_avg_sq": t["0.exp_avg_sq"].clone()})
    ),
    "maximize": _state(lambda state: state["param_groups"][0].update(maximize=True)),
    "optim_steps abc": _state(lambda state: state.update(optim_steps="abc")),
}


@pytest.mark.parametrize("damage", sorted(OPTIMIZER_DAMAGE))
def test_optimizer_state_is_checked_at_load(harness: Harness, damage: str) -> None:
    """Once the load succeeded and every later optim_step failed with internal_error."""
    uri, directory = _copy(harness, f"optimizer-{sorted(OPTIMIZER_DAMAGE).index(damage)}")
    OPTIMIZER_DAMAGE[damage](directory)
    error = _refused(harness, uri, optimizer=True)
    assert error.code == "checkpoint_invalid", error.message
    assert OPTIMIZER_FILE in error.message or TRAINER_STATE in error.message


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:100])


def _huge_header(path: Path) -> None:
    path.write_bytes((2**63 - 1).to_bytes(8, "little") + path.read_bytes()[8:])


def _bad_header(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:8] + b"[" + data[9:])  # the header opened "{"


def _dev_zero(path: Path) -> None:
    path.unlink()
    path.symlink_to("/dev/zero")


CORRUPT = {
    "truncated": (ADAPTER_FILE, _truncate, "truncated"),
    "header length 2**63-1": (ADAPTER_FILE, _huge_header, "header claims"),
    "bad header": (ADAPTER_FILE, _bad_header, "not valid JSON"),
    "/dev/zero": (OPTIMIZER_FILE, _dev_zero, "outside the data directory"),
    "bad JSON": (TRAINER_STATE, lambda p: p.write_text("{'steps': 1"), "not valid JSON"),
    "bad config JSON": (ADAPTER_CONFIG, lambda p: p.write_text("{"), "not valid JSON"),
}


@pytest.mark.parametrize("case", sorted(CORRUPT))
def test_corrupt_files_are_named_not_internal_errors(harness: Harness, case: str) -> None:
    """Once `internal_error: trio-local failed: SafetensorError` (the SDK: "retry if safe")."""
    name, damage, cause = CORRUPT[case]
    uri, directory = _copy(harness, f"corrupt-{sorted(CORRUPT).index(case)}")
    damage(directory / name)
    error = _refused(harness, uri, optimizer=True)
    assert error.code == "checkpoint_invalid"
    assert name in error.message and cause in error.message, error.message


def test_a_state_checkpoint_without_its_optimizer_file_says_so(harness: Harness) -> None:
    """Once called "a sampler checkpoint"."""
    uri, directory = _copy(harness, "no-optimizer-file")
    (directory / OPTIMIZER_FILE).unlink()
    error = _refused(harness, uri, optimizer=True)
    assert error.code == "checkpoint_invalid"
    assert f"{OPTIMIZER_FILE} is missing" in error.message and "sampler" not in error.message
    harness.init(uri)  # its weights alone still load
    assert harness.loss() > 0


@pytest.mark.parametrize("rank", [20_000, 1_000_000])
def test_a_sampler_config_claiming_a_huge_rank_allocates_nothing(harness: Harness, rank) -> None:
    """Once an adapter was built from the config first: 626 MB never given back at rank
    20,000, an attempt at ~30 GB at 1,000,000."""
    uri, directory = _copy(harness, f"rank-{rank}")

    def claim(config: dict) -> None:
        config["r"] = config["trio_local"]["lora"]["rank"] = rank

    _edit_json(directory / ADAPTER_CONFIG, claim)
    engine = harness.engine
    host = engine.host(engine_entry())
    before = set(host.adapters)
    request = SampleRequest.model_validate(sample_body([9707, 1879]))
    with pytest.raises(EngineError) as error:
        harness.pool.submit(engine.sample, MODEL, uri, request).result(60)
    assert error.value.code == "checkpoint_invalid"
    assert f"rank {rank}" in error.value.message and uri in error.value.message
    assert set(host.adapters) == before


def engine_entry():
    from trio_local import catalogue

    return catalogue.resolve(MODEL)


def test_start_up_removes_partial_archives(tmp_path: Path) -> None:
    """A SIGKILL while an archive was built once left a 41 MB partial archive for good."""
    archives = tmp_path / ARCHIVES_DIR
    archives.mkdir()
    partial = archives / ".ck_abc-4096.tar.k2j4h5g6"
    partial.write_bytes(b"\0" * 4096)
    complete = archives / "ck_abc-4096.tar"
    complete.write_bytes(b"\0" * 4096)
    Service(ServeConfig(data_dir=tmp_path, warmup=False)).stop()
    assert not partial.exists() and complete.exists()


def test_a_fifo_checkpoint_is_refused_and_the_service_keeps_answering(
    harness: Harness, tmp_path: Path
) -> None:
    """Once a FIFO in place of the adapter froze the whole service (`GET /`, `/api/models`,
    heartbeats, every run): safetensors blocked in open() holding the GIL. A service of its
    own: the freeze would take this test's process with it."""
    uri, directory = _copy(harness, "fifo")
    data_dir = tmp_path / "data"
    # Links are copied as links: other tests' copies link to /dev/zero.
    ignore = shutil.ignore_patterns("trio-local.lock")
    shutil.copytree(harness.data_dir, data_dir, symlinks=True, ignore=ignore)
    fifo = data_dir / directory.relative_to(harness.data_dir) / ADAPTER_FILE
    command = [str(Path(sys.executable).with_name("trio-local")), "serve", "--port", "0"]
    process = subprocess.Popen(
        [*command, "--no-warmup", "--data-dir", str(data_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().split()[-1]
        key = (data_dir / "api_key").read_text().strip()
        # Once it runs (start-up recovery would set such a checkpoint aside at once).
        fifo.unlink()
        os.mkfifo(fifo)
        wire = Wire(LocalService(base_url=url, api_key=key, data_dir=data_dir), timeout=120)
        session = wire.session()
        answer = wire.control(
            "POST",
            f"{V1}/service-sessions/{session}/sampling-runs",
            json={"base_model": MODEL, "source_checkpoint_uri": uri},
        )
        run = answer.json()
        assert answer.status_code == 200, run
        sampled: list[httpx.Response] = []
        sampling = threading.Thread(
            target=lambda: sampled.append(wire.sample(run, sample_body([1, 2])))
        )
        sampling.start()
        for _ in range(3):  # while (and after) the sampler reads its checkpoint
            assert httpx.get(f"{url}/", timeout=10).status_code == 200
            models = wire.control("GET", "/models", timeout=10)
            assert models.status_code == 200
        sampling.join(120)
        assert sampled, "the sample request never came back"
        body = body_of(sampled[0])
        assert sampled[0].status_code == 400 and body["code"] == "checkpoint_invalid", body
        assert "FIFO" in body["message"] and ADAPTER_FILE in body["message"]
        wire.close()
    finally:
        # A reader stuck in open() (as the old code was) gets its writer and returns; with
        # no reader there is nothing stuck (ENXIO).
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(30)


def test_the_expected_shapes_are_those_of_a_real_adapter(harness: Harness) -> None:
    """The loader sizes files by shapes computed before any adapter exists: they must be the
    shapes an adapter of those settings really has (every target, the unembedding too)."""
    from trio_local.engine.model import LoraSpec

    host = harness.engine.host(engine_entry())
    spec = LoraSpec(8, 0, train_mlp=True, train_attn=True, train_unembed=True)
    host.add_adapter("shapes", spec)
    try:
        state = {key: tuple(value.shape) for key, value in host.state("shapes").items()}
        assert host.adapter_shapes(spec) == dict(sorted(state.items()))
        # and in the optimizer's order (its state is kept by parameter index)
        order = [tuple(param.shape) for param in host.parameters("shapes").values()]
        assert list(host.adapter_shapes(spec).values()) == order
    finally:
        host.remove_adapter("shapes")


def test_a_state_saved_before_any_step_loads_with_its_empty_optimizer(harness: Harness) -> None:
    harness.init()
    uri = harness.save_state("before-any-step")
    loss = harness.loss()
    harness.init(uri, optimizer=True)
    assert harness.loss() == loss
    harness.step()  # a fresh AdamW state, as the saved run would have had
