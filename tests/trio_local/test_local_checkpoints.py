"""save_state / load_state / create_training_client_from_state[_with_optimizer]: exact resume."""

from __future__ import annotations

import errno
import sqlite3

import numpy as np
import pytest
import pytrio as trio
from pytrio.errors.base import PyTrioError
from pytrio.errors.event import EventFailedError

from tests.support.local import MODEL, sft_batch, train

K, MORE = 3, 5
LR = 2e-3


@pytest.fixture(scope="module")
def uninterrupted(client):
    """K + MORE + 1 steps in one go: the losses a resumed run must reproduce."""
    training = client.create_lora_training_client(base_model=MODEL, rank=8, seed=11)
    data = sft_batch(training.get_tokenizer())
    losses = train(training, data, steps=K, lr=LR)
    saved = training.save_state("step-3").result()
    losses += train(training, data, steps=MORE + 1, lr=LR)
    return data, losses, saved.path


def test_resume_with_optimizer_matches_the_uninterrupted_run(client, uninterrupted) -> None:
    data, losses, path = uninterrupted
    resumed = client.create_training_client_from_state_with_optimizer(path)
    again = train(resumed, data, steps=MORE + 1, lr=LR)
    # loss at step K + MORE (0-based index K + MORE), computed after MORE resumed updates
    assert abs(again[MORE] - losses[K + MORE]) <= 1e-5, (again, losses)
    np.testing.assert_allclose(again, losses[K:], atol=1e-5)


def test_resume_without_optimizer_restores_weights_only(client, uninterrupted) -> None:
    data, losses, path = uninterrupted
    weights_only = client.create_training_client_from_state(path)
    first = weights_only.forward(data, "cross_entropy").result().metrics["loss_mean"]
    assert abs(first - losses[K]) <= 1e-5
    after = train(weights_only, data, steps=2, lr=LR)
    # fresh Adam moments take a different second step than the restored ones
    assert abs(after[1] - losses[K + 1]) > 1e-6


def test_load_state_with_optimizer_on_a_fresh_client(client, uninterrupted) -> None:
    data, losses, path = uninterrupted
    fresh = client.create_lora_training_client(base_model=MODEL, rank=8, seed=11)
    fresh.load_state_with_optimizer(path).result()
    again = train(fresh, data, steps=2, lr=LR)
    np.testing.assert_allclose(again, losses[K : K + 2], atol=1e-5)


def test_load_state_refuses_a_checkpoint_of_another_rank(client, uninterrupted) -> None:
    _, _, path = uninterrupted
    other = client.create_lora_training_client(base_model=MODEL, rank=16, seed=11)
    with pytest.raises(PyTrioError) as error:
        other.load_state(path).result()
    assert error.value.code == "validation.checkpoint_config_mismatch"


def test_save_state_twice_needs_overwrite(client) -> None:
    training = client.create_lora_training_client(base_model=MODEL, rank=4, seed=5)
    training.save_state("twice").result()
    with pytest.raises(PyTrioError) as error:
        training.save_state("twice").result()
    assert error.value.code == "checkpoint_exists"
    assert "overwrite" in str(error.value)
    replaced = training.save_state("twice", overwrite=True).result()
    assert replaced.path.endswith("/weights/twice")


def test_sampler_checkpoint_cannot_restore_an_optimizer(client) -> None:
    training = client.create_lora_training_client(base_model=MODEL, rank=4, seed=5)
    saved = training.save_weights_for_sampler("no-optimizer").result()
    with pytest.raises(PyTrioError) as error:
        client.create_training_client_from_state_with_optimizer(saved.path).forward_backward(
            [
                trio.Datum(
                    model_input=trio.ModelInput.from_ints([1, 2]),
                    loss_fn_inputs={"target_tokens": [2, 3]},
                )
            ],
            "cross_entropy",
        ).result()
    assert error.value.code == "checkpoint_has_no_optimizer"


def test_checkpoints_with_a_ttl_expire(client) -> None:
    import time

    training = client.create_lora_training_client(base_model=MODEL, rank=4, seed=6)
    short = training.save_weights_for_sampler("short-lived", ttl_seconds=1).result()
    kept = training.save_weights_for_sampler("kept").result()
    rest = client.create_rest_client()
    listed = {c.path: c for c in rest.list_user_checkpoints().result().checkpoints}
    assert listed[short.path].expires_at is not None and listed[kept.path].expires_at is None
    time.sleep(1.5)
    paths = {c.path for c in rest.list_user_checkpoints().result().checkpoints}
    assert short.path not in paths and kept.path in paths
    with pytest.raises(PyTrioError) as error:
        client.create_sampling_client(base_model=MODEL, model_path=short.path)
    assert error.value.code == "checkpoint_not_found"


def _disk_full(*_args, **_kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


def _database_full(*_args, **_kwargs):
    raise sqlite3.OperationalError("database or disk is full")


@pytest.mark.parametrize(
    ("target", "fault"),
    [
        ("trio_local.storage.files.fsync_tree", _disk_full),  # writing the files
        ("trio_local.storage.db.Store.add_checkpoint", _database_full),  # committing the row
    ],
)
def test_a_full_disk_fails_the_save_by_name_and_the_client_saves_later(
    client, service, monkeypatch, target, fault
) -> None:
    """Once answered `internal_error: trio-local failed: OperationalError`."""
    training = client.create_lora_training_client(base_model=MODEL, rank=4, seed=5)
    name = f"when-full-{fault.__name__.strip('_')}"
    with monkeypatch.context() as patched:
        patched.setattr(target, fault)
        with pytest.raises(EventFailedError) as error:
            training.save_state(name).result()
    assert error.value.code == "database_error"
    message = str(error.value)
    assert "disk is full" in message and str(service.data_dir) in message
    assert "--data-dir" in message
    assert not list(service.data_dir.rglob(f"*{name}*"))  # nothing half-written is left
    saved = training.save_state(name).result()  # space again: the same client saves
    assert saved.path.endswith(f"/{name}")
