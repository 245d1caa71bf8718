"""Faults and limits: capacity 429, a client that disappears, a server killed mid-save."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import pytrio as trio

from tests.support.local import MODEL, local_service, read_stats

pytest.importorskip("torch")

HOLD_A_RUN = f"""
import time
import pytrio as trio
trio.configure_observability(enabled=False)
service = trio.ServiceClient()
training = service.create_lora_training_client(base_model={MODEL!r}, rank=4)
tokens = training.get_tokenizer().encode("hello there")
datum = trio.Datum(model_input=trio.ModelInput.from_ints(tokens[:-1]),
                   loss_fn_inputs={{"target_tokens": tokens[1:]}})
training.forward([datum], "cross_entropy").result()
saved = training.save_state("kept").result()
print("READY", training.training_run_cuid, saved.path, flush=True)
time.sleep(600)
"""


def test_capacity_429_waits_and_a_vanished_client_frees_its_slot(tmp_path: Path) -> None:
    trio.configure_observability(enabled=False)
    with local_service(max_training_runs=1, heartbeat_timeout_s=6.0, cycle_ms=0) as service:
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLD_A_RUN],
            env={**os.environ, **service.env},
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            line = holder.stdout.readline()
            assert line.startswith("READY"), line
            _, held_run, checkpoint = line.split()
            trio.configure(actor_capacity_poll_interval_seconds=0.3)
            client = trio.ServiceClient()
            created: list = []
            waiter = threading.Thread(
                target=lambda: created.append(
                    client.create_lora_training_client(base_model=MODEL, rank=4)
                ),
                daemon=True,
            )
            started = time.monotonic()
            waiter.start()
            waiter.join(4.0)  # the holder keeps beating: the slot stays taken
            assert not created, "creation should wait while the only slot is taken"
            assert read_stats(service)["runs"][held_run]["status"] == "RUNNING"

            holder.send_signal(signal.SIGKILL)  # no session close, no more heartbeats
            holder.wait(10)
            waiter.join(60)
            assert created, "creation did not proceed after the silent run was ended"
            assert time.monotonic() - started > 4.0
            assert read_stats(service)["runs"][held_run]["status"] == "ENDED"
            kept = client.create_rest_client().list_checkpoints(held_run).result().checkpoints
            assert [c.path for c in kept] == [checkpoint]  # its checkpoints stay
        finally:
            holder.kill()
            holder.wait(10)
            trio.configure(actor_capacity_poll_interval_seconds=30.0)


SAVE_LOOP = f"""
import pytrio as trio
trio.configure_observability(enabled=False)
service = trio.ServiceClient()
training = service.create_lora_training_client(base_model={MODEL!r}, rank=32, train_unembed=True)
tokens = training.get_tokenizer().encode("a checkpoint that is large enough to take a while")
datum = trio.Datum(model_input=trio.ModelInput.from_ints(tokens[:-1]),
                   loss_fn_inputs={{"target_tokens": tokens[1:]}})
training.forward_backward([datum], "cross_entropy").result()
training.optim_step(trio.AdamParams(learning_rate=1e-3)).result()
print("RUN", training.training_run_cuid, flush=True)
for i in range(40):
    print("SAVED", training.save_state(f"ck-{{i}}").result().path, flush=True)
"""


def start_server(data_dir: Path) -> tuple[subprocess.Popen, dict[str, str]]:
    server = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("trio-local")),
            "serve",
            "--port",
            "0",
            "--cycle-ms",
            "0",
            "--data-dir",
            str(data_dir),
            "--api-key",
            "test-key-0123456789",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    env = {"PYTRIO_API_KEY": "test-key-0123456789"}
    for line in server.stdout:
        if match := re.search(r"serving PyTRIO at (\S+)", line):
            env["PYTRIO_BASE_URL"] = match.group(1)
        if match := re.search(r"export MODELSCOPE_CACHE=(\S+)", line):
            env["MODELSCOPE_CACHE"] = match.group(1)
            return server, env
    raise AssertionError("trio-local serve did not start")


def test_kill_during_save_state_leaves_a_complete_checkpoint_or_none(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    server, env = start_server(data_dir)
    client = subprocess.Popen(
        [sys.executable, "-c", SAVE_LOOP],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        text=True,
    )
    acknowledged: list[str] = []
    try:
        run_id = client.stdout.readline().split()[1]
        acknowledged.append(client.stdout.readline().split()[1])  # ck-0 is complete
        weights = data_dir / "checkpoints" / run_id / "weights"
        deadline = time.monotonic() + 120
        while not any(p.name.startswith(".") for p in weights.iterdir()):  # a save in progress
            assert time.monotonic() < deadline, "no save was seen in progress"
            time.sleep(0.001)
        server.send_signal(signal.SIGKILL)
        server.wait(10)
    finally:
        server.kill()
        client.kill()
        remaining, _ = client.communicate(timeout=30)
        server.wait(10)
    acknowledged += re.findall(r"SAVED (\S+)", remaining or "")

    with local_service(data_dir=data_dir, cycle_ms=0) as service:
        from trio_local.storage.db import Store

        store = Store(service.data_dir / "trio-local.sqlite3")
        rows = {row.path: row for row in store.all_checkpoints()}
        store.close()
        on_disk = sorted(p for p in weights.iterdir())
        assert all(not p.name.startswith(".") for p in on_disk), on_disk  # no partial leftovers
        # SQLite agrees with the files (rows hold paths relative to the data directory)
        assert sorted(rows) == [str(p.relative_to(service.data_dir)) for p in on_disk]
        for path in on_disk:
            names = {f.name for f in path.iterdir()}
            assert {"adapter_model.safetensors", "trainer_state.json"} <= names
            size = sum(f.stat().st_size for f in path.iterdir())
            assert rows[str(path.relative_to(service.data_dir))].size_bytes == size
        listed = {row.uri for row in rows.values()}
        assert set(acknowledged) <= listed  # every save the client saw succeed survived
        assert len(listed) <= len(acknowledged) + 1  # plus, at most, the interrupted one

        trio.configure_observability(enabled=False)
        resumed = trio.ServiceClient().create_training_client_from_state_with_optimizer(
            acknowledged[-1]
        )
        tokens = resumed.get_tokenizer().encode("still trains")
        datum = trio.Datum(
            model_input=trio.ModelInput.from_ints(tokens[:-1]),
            loss_fn_inputs={"target_tokens": tokens[1:]},
        )
        assert resumed.forward([datum], "cross_entropy").result().metrics["token_count"] > 0
