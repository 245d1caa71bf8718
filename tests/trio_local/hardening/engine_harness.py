"""trio-local's engine in this process, driven with the SDK's own event models (no HTTP): the
checkpoint tests load hundreds of damaged copies, each in milliseconds."""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

from pytrio.protocol.actor.events.codec import payload_model_for_event
from pytrio.protocol.actor.events.event import EventEnvelope, EventType

from tests.trio_local.hardening.wire import ADAM, MODEL, datum, event_id, forward_payload
from trio_local.config import ServeConfig
from trio_local.protocol.events import EventOutcome
from trio_local.service import Service
from trio_local.storage import checkpoints as ckpt_files
from trio_local.storage.checkpoints import (
    ADAPTER_CONFIG,
    ADAPTER_FILE,
    OPTIMIZER_FILE,
    TRAINER_STATE,
)
from trio_local.storage.db import new_cuid
from trio_local.storage.rows import NewTrainingRun

TOKENS = [9707, 1879, 11, 1879, 13, 40, 1079, 264]
LORA = {"rank": 4, "seed": 3, "train_mlp": True, "train_attn": True, "train_unembed": False}
# A load that has not answered by then hangs (a FIFO read blocks forever).
HANG_S = 60.0


class Harness:
    """One training run of the engine, re-initialised from any checkpoint."""

    def __init__(self, data_dir: Path) -> None:
        self.service = Service(ServeConfig(data_dir=data_dir, warmup=False))
        self.engine = self.service.engine
        self.store = self.service.store
        self.data_dir = self.service.data_dir
        session = self.store.create_session("0.2.9").cuid
        fields = {"model_id": MODEL, "lora_rank": LORA["rank"]}
        fields |= {key: LORA[key] for key in ("seed", "train_mlp", "train_attn", "train_unembed")}
        self.run_id = self.store.create_training_run(session, NewTrainingRun(**fields)).cuid
        self.index = 0
        self.pool = ThreadPoolExecutor(1)

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.service.stop()

    def event(self, kind: EventType, payload: dict[str, Any]) -> EventOutcome:
        """Run one event as the scheduler would; raises what the engine raises (a hang fails
        after HANG_S)."""
        self.index += 1
        envelope = EventEnvelope.model_validate(
            {
                "version": 1,
                "event_id": event_id(),
                "type": kind.value,
                "metadata": {
                    "index": self.index,
                    "step": 0,
                    "timestamp": int(time.time() * 1000),
                    "sdk": "pytrio",
                    "sdk_version": "0.2.9",
                    "run_id": self.run_id,
                },
                "payload": payload,
            }
        )
        model = payload_model_for_event(kind).model_validate(payload)
        return self.pool.submit(self.engine.handle_event, envelope, model).result(HANG_S)

    def init(self, checkpoint_uri: str | None = None, *, optimizer: bool = False) -> None:
        payload = {"base_model": MODEL, "lora_config": LORA, "checkpoint_uri": checkpoint_uri}
        self.event(EventType.TRAINER_INIT_RUN, {**payload, "load_optimizer": optimizer})

    def loss(self) -> float:
        payload = forward_payload([datum(TOKENS)])
        outcome = self.event(EventType.TRAINER_FORWARD, payload)
        return outcome.result["metrics"]["loss_sum"]

    def step(self) -> None:
        self.event(EventType.TRAINER_FORWARD_BACKWARD, forward_payload([datum(TOKENS)]))
        self.event(
            EventType.TRAINER_OPTIMIZE_STEP, {"adam_params": {**ADAM, "learning_rate": 1e-2}}
        )

    def save_state(self, name: str) -> str:
        outcome = self.event(EventType.TRAINER_SAVE_STATE, {"name": name})
        return outcome.result["checkpoint"]["uri"]

    def copy(self, uri: str, name: str, **changes: Any) -> tuple[str, Path]:
        """A new checkpoint row `name` with a copy of `uri`'s files: (its uri, its directory)."""
        row = self.store.checkpoint_by_uri(uri)
        assert row is not None
        path = ckpt_files.relative_dir(row.run_cuid, row.kind, name)
        new_uri = row.uri.rsplit("/", 1)[0] + f"/{name}"
        target = ckpt_files.resolve(self.data_dir, path)
        shutil.copytree(ckpt_files.resolve(self.data_dir, row.path), target, symlinks=True)
        copied = replace(row, cuid=new_cuid("ck"), name=name, uri=new_uri, path=path, **changes)
        self.store.add_checkpoint(copied)
        return new_uri, target


@contextlib.contextmanager
def trained(data_dir: Path, steps: int, name: str) -> Iterator[tuple[Harness, str]]:
    """A harness whose run trained `steps` steps and saved its state as `name` (its uri)."""
    harness = Harness(data_dir)
    try:
        harness.init()
        for _ in range(steps):
            harness.step()
        yield harness, harness.save_state(name)
    finally:
        harness.close()


def read_config(directory: Path) -> dict:
    return json.loads((directory / ADAPTER_CONFIG).read_text())


def write_config(directory: Path, config: dict) -> None:
    (directory / ADAPTER_CONFIG).write_text(json.dumps(config))


def resign(directory: Path) -> None:
    """The config records the files' current digests: an edit that keeps the checkpoint
    consistent (as an older trio-local's unverified checkpoint would be)."""
    config = read_config(directory)
    config["trio_local"]["sha256"] = {
        name: hashlib.sha256((directory / name).read_bytes()).hexdigest()
        for name in (ADAPTER_FILE, OPTIMIZER_FILE, TRAINER_STATE)
        if (directory / name).is_file()
    }
    write_config(directory, config)
