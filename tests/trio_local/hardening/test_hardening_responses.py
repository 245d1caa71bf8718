"""Control-plane responses are the SDK's own response models, field for field."""

from __future__ import annotations

from pydantic import BaseModel
from pytrio.protocol.control.checkpoint.download import CheckpointDownloadResponse
from pytrio.protocol.control.sampling_run.create import SamplingRunCreateResponse
from pytrio.protocol.control.sampling_run.get import SamplingRunGetResponse
from pytrio.protocol.control.sampling_run.renew import SamplingRunRenewResponse
from pytrio.protocol.control.service_session.get import (
    ServiceSessionGetResponse,
    ServiceSessionListItemResponse,
)
from pytrio.protocol.control.service_session.renew import ServiceSessionRenewResponse
from pytrio.protocol.control.training_run.create import TrainingRunCreateResponse
from pytrio.protocol.control.training_run.find_by_checkpoint_uri import (
    TrainingRunFindByCheckpointURIResponse,
)
from pytrio.protocol.control.training_run.renew import TrainingRunRenewResponse
from pytrio.protocol.control.training_run.update import TrainingRunUpdateResponse

import trio_local
from tests.trio_local.hardening.wire import MODEL, V1, Wire, lora


def exactly(model: type[BaseModel], answer) -> None:
    assert answer.status_code == 200, answer.text[:300]
    body = answer.json()
    model.model_validate(body)
    assert set(body) == set(model.model_fields), model.__name__  # nothing added, nothing left


def test_every_response_is_exactly_its_sdk_model(tmp_path) -> None:
    with trio_local.serve_in_background(data_dir=tmp_path, configure_sdk=False) as service:
        wire = Wire(service)
        created = wire.control("POST", f"{V1}/service-sessions", json={"sdk_version": "0.2.9"})
        exactly(ServiceSessionListItemResponse, created)
        session = created.json()["service_session_cuid"]
        exactly(ServiceSessionGetResponse, wire.control("GET", f"{V1}/service-sessions/{session}"))
        renewed = wire.control("POST", f"{V1}/service-sessions/{session}/renew")
        exactly(ServiceSessionRenewResponse, renewed)

        answer = wire.create_training_run(session)
        exactly(TrainingRunCreateResponse, answer)
        run = answer.json()
        run_id = run["training_run_cuid"]
        exactly(
            TrainingRunRenewResponse, wire.control("POST", f"{V1}/training-runs/{run_id}/renew")
        )
        init = {"base_model": MODEL, "lora_config": lora(4)}
        assert wire.result(run, wire.event(run, "trainer.init_run", init, 1))["status"] == (
            "succeeded"
        )
        saved = wire.result(run, wire.event(run, "trainer.save_state", {"name": "shape"}, 2))
        uri = saved["result"]["checkpoint"]["uri"]
        found = wire.control(
            "GET", f"{V1}/training-runs/by-checkpoint-uri", params={"checkpoint_uri": uri}
        )
        exactly(TrainingRunFindByCheckpointURIResponse, found)
        second = wire.training_run(session)
        updated = wire.control(
            "PATCH",
            f"{V1}/service-sessions/{session}/training-runs/{second['training_run_cuid']}",
            json={"source_checkpoint_uri": uri, "restore_optimizer": True},
        )
        exactly(TrainingRunUpdateResponse, updated)
        checkpoint_id = wire.control("GET", f"{V1}/checkpoints").json()["checkpoints"][0]["cuid"]
        link = wire.control("GET", f"{V1}/checkpoints/{checkpoint_id}/download-url")
        exactly(CheckpointDownloadResponse, link)

        path = f"{V1}/service-sessions/{session}/sampling-runs"
        sampler = wire.control("POST", path, json={"base_model": MODEL})
        exactly(SamplingRunCreateResponse, sampler)
        sampler_id = sampler.json()["sampling_run_cuid"]
        exactly(SamplingRunGetResponse, wire.control("GET", f"{V1}/sampling-runs/{sampler_id}"))
        renew = wire.control("POST", f"{V1}/sampling-runs/{sampler_id}/renew")
        exactly(SamplingRunRenewResponse, renew)
        wire.close()
