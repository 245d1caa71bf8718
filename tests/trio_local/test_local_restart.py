"""A restart keeps runs, checkpoints and the key; a run resumes from its checkpoint."""

from __future__ import annotations

import pytest
import pytrio as trio
from pytrio.errors.base import PyTrioError

import trio_local
from tests.support.local import MODEL, sft_batch, train
from trio_local.storage.db import Store


def test_runs_and_checkpoints_survive_a_restart(tmp_path) -> None:
    trio.configure_observability(enabled=False)
    with trio_local.serve_in_background(data_dir=tmp_path) as first:
        client = trio.ServiceClient()
        training = client.create_lora_training_client(base_model=MODEL, rank=4, seed=9)
        data = sft_batch(training.get_tokenizer())
        train(training, data, steps=1)
        saved = training.save_state("before-restart").result()
        expected = training.forward(data, "cross_entropy").result().metrics["loss_mean"]

    with trio_local.serve_in_background(data_dir=tmp_path) as second:
        assert second.api_key == first.api_key
        client = trio.ServiceClient()
        rest = client.create_rest_client()
        paths = [c.path for c in rest.list_user_checkpoints().result().checkpoints]
        assert saved.path in paths
        run_id = saved.path.removeprefix("trio://").split("/")[0]
        assert rest.get_training_run(run_id).result().lora_rank == 4
        # its weights died with the first process: it ends at start-up instead of holding a slot
        status = Store(second.data_dir / "trio-local.sqlite3").training_run(run_id).status
        assert status == "ENDED"
        resumed = client.create_training_client_from_state_with_optimizer(saved.path)
        loss = resumed.forward(data, "cross_entropy").result().metrics["loss_mean"]
        assert abs(loss - expected) <= 1e-5
        # the old client's run lost its in-memory weights with the old process: a clear error
        with pytest.raises(PyTrioError):
            training.forward(data, "cross_entropy").result()
