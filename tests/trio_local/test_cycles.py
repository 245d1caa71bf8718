"""The clock-cycle scheduler through the real SDK: submission patterns, stats, shared cycles."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import pytrio as trio

from bench.support.submission_patterns import pipelined, serial, submit_then_wait
from tests.support.local import MODEL, local_service, read_stats

pytest.importorskip("torch")


def batch(tokenizer, size: int = 2) -> list[trio.Datum]:
    data = []
    for i in range(size):
        tokens = tokenizer.encode(f"Example {i}: the quick brown fox jumps over the lazy dog.")
        data.append(
            trio.Datum(
                model_input=trio.ModelInput.from_ints(tokens[:-1]),
                loss_fn_inputs={"target_tokens": tokens[1:]},
            )
        )
    return data


def test_submission_patterns_cost_three_two_and_one_cycles_per_update(tmp_path: Path) -> None:
    trio.configure_observability(enabled=False)
    updates = 4
    measured = {}
    with local_service(cycle_ms=300) as service:
        client = trio.ServiceClient()
        for pattern in (serial, submit_then_wait, pipelined):
            training = client.create_lora_training_client(base_model=MODEL, rank=4)
            data = batch(training.get_tokenizer())
            adam = trio.AdamParams(learning_rate=1e-4)
            training.forward(data, "cross_entropy").result()  # init and tokenizer
            before = read_stats(service)["runs"][training.training_run_cuid]
            pattern(training, data, adam, updates)
            after = read_stats(service)["runs"][training.training_run_cuid]
            assert after["updates"] - before["updates"] == updates
            measured[pattern.__name__] = (after["cycles"] - before["cycles"]) / updates
    assert measured["pipelined"] < measured["submit_then_wait"] < measured["serial"], measured
    assert measured["serial"] >= 2.5, measured
    assert 1.5 <= measured["submit_then_wait"] <= 2.75, measured
    assert measured["pipelined"] <= 1.5, measured


TRAIN = f"""
import sys
import pytrio as trio
trio.configure_observability(enabled=False)
seed, text = int(sys.argv[1]), sys.argv[2]
training = trio.ServiceClient().create_lora_training_client(base_model={MODEL!r}, rank=8, seed=seed)
tokens = training.get_tokenizer().encode(text)
datum = trio.Datum(model_input=trio.ModelInput.from_ints(tokens[:-1]),
                   loss_fn_inputs={{"target_tokens": tokens[1:]}})
print("RUN", training.training_run_cuid, flush=True)
sys.stdin.readline()  # start together
for step in range(3):
    fb = training.forward_backward([datum], "cross_entropy")
    opt = training.optim_step(trio.AdamParams(learning_rate=5e-3))
    print("LOSS", repr(fb.result().metrics["loss_sum"]), flush=True)
    opt.result()
    if step == 0:  # every run has done a step before any does its second
        print("STEPPED", flush=True)
        sys.stdin.readline()
"""
JOBS = [("11", "Alpha beta gamma delta epsilon."), ("22", "One two three four five six seven.")]


def start(service, seed: str, text: str) -> tuple[subprocess.Popen, str]:
    """A client process with its run created, waiting for the go."""
    process = subprocess.Popen(
        [sys.executable, "-c", TRAIN, seed, text],
        env={**os.environ, **service.env},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    line = process.stdout.readline()
    assert line.startswith("RUN"), line
    return process, line.split()[1]


def go(started: list[tuple[subprocess.Popen, str]]) -> list[tuple[str, list[float]]]:
    """Starts the processes together; each does one step, then all go on together (so on a
    loaded machine one run cannot finish before the other has begun)."""
    for process, _ in started:
        process.stdin.write("go\n")
        process.stdin.flush()
    first_steps = []
    for process, _ in started:
        lines = []
        while not (line := process.stdout.readline()).startswith("STEPPED"):
            assert line, "".join(lines)  # the process ended before its first step
            lines.append(line)
        first_steps.append("".join(lines))
    for process, _ in started:
        process.stdin.write("go\n")
        process.stdin.close()
    results = []
    for (process, run), first in zip(started, first_steps, strict=True):
        out = first + process.stdout.read()
        assert process.wait(600) == 0, out
        losses = [float(line.split()[1]) for line in out.splitlines() if line.startswith("LOSS")]
        results.append((run, losses))
    return results


def train_alone(seed: str, text: str) -> tuple[str, list[float]]:
    """TRAIN's run, in this process with no other client: the losses a shared run must match.
    (Only the two runs side by side need processes of their own; a third and fourth process
    would cost seconds of imports each and test nothing more.)"""
    trio.configure_observability(enabled=False)
    training = trio.ServiceClient().create_lora_training_client(
        base_model=MODEL, rank=8, seed=int(seed)
    )
    tokens = training.get_tokenizer().encode(text)
    datum = trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": tokens[1:]},
    )
    losses = []
    for _ in range(3):
        fb = training.forward_backward([datum], "cross_entropy")
        opt = training.optim_step(trio.AdamParams(learning_rate=5e-3))
        losses.append(fb.result().metrics["loss_sum"])
        opt.result()
    return training.training_run_cuid, losses


def test_two_processes_share_cycles_and_never_mix_results() -> None:
    # A clock is what lets two clients' work meet at a boundary (with 0 each request starts
    # its own cycle the moment it arrives).
    with local_service(cycle_ms=100) as service:
        shared_before = read_stats(service)["shared_cycles"]
        together = go([start(service, *job) for job in JOBS])
        stats = read_stats(service)
        alone = [train_alone(*job) for job in JOBS]
    for (_, shared), (_, single) in zip(together, alone, strict=True):
        assert shared == pytest.approx(single, rel=1e-5, abs=1e-6)  # same as the run alone
    assert together[0][1] != pytest.approx(together[1][1])  # and the two runs differ
    first, second = (stats["runs"][run] for run, _ in together)
    assert (
        first["first_cycle"] <= second["last_cycle"]
        and second["first_cycle"] <= first["last_cycle"]
    )
    assert stats["shared_cycles"] > shared_before  # some cycles ran both runs' work


def test_stats_endpoint_and_cli_report_each_run() -> None:
    trio.configure_observability(enabled=False)
    with local_service(cycle_ms=0) as service:
        training = trio.ServiceClient().create_lora_training_client(base_model=MODEL, rank=4)
        data = batch(training.get_tokenizer(), size=1)
        adam = trio.AdamParams(learning_rate=1e-4)
        submit_then_wait(training, data, adam, 2)
        stats = read_stats(service)
        entry = stats["runs"][training.training_run_cuid]
        assert stats["cycle_ms"] == 0 and stats["cycles"] >= entry["cycles"] >= 2
        assert entry["updates"] == 2 and entry["events"] == 5  # init_run, 2 x (fb, optim)
        assert entry["kind"] == "training" and entry["status"] == "RUNNING"
        assert entry["cycles_per_update"] == pytest.approx(entry["cycles"] / 2, abs=1e-3)
        assert entry["idle_cycles"] == entry["cycles"] - entry["active_cycles"]
        assert entry["queue_wait_s"] >= 0 and entry["mean_queue_wait_ms"] is not None

        command = shutil.which("trio-local", path=str(Path(sys.executable).parent))
        shown = subprocess.run(
            [command, "stats", "--url", service.base_url],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
        assert "cycles/update" in shown
        row = next(line for line in shown.splitlines() if training.training_run_cuid in line)
        assert row.split()[1:5] == ["training", "RUNNING", str(entry["cycles"]), "2"]

    gone = subprocess.run(
        [command, "stats", "--url", service.base_url],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert gone.returncode == 1 and "--url" in gone.stderr
