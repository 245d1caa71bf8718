"""The warm-up: `trio-local serve` prepares the default model in the background from its start.

Each service is a real `trio-local serve` process, driven over HTTP by the real SDK in a client
process of its own (one SDK runtime per service, as a script has).
To hold the warm-up open long enough for a request to arrive during it, or to break it, the
service runs with a `torch` package first on its PYTHONPATH that sleeps and then hands over to the
real one, or that fails to import (a broken install). Only the model needs torch: the service's
tokenizer is read without it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.local import MODEL

KEY = "warmup-test-key-0123"
# Holds the import until the client's first step has been waiting for it a while (at most the
# delay): a fixed hold long enough for a slow client start cost a minute on every run.
SLOW_TORCH = """
import importlib, os, sys, time
_deadline = time.monotonic() + float(os.environ["TRIO_TEST_SHIM_DELAY_S"])
_release = os.environ["TRIO_TEST_SHIM_RELEASE"]
while time.monotonic() < _deadline and not os.path.exists(_release):
    time.sleep(0.05)
_here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
del sys.modules[__name__]
sys.modules[__name__] = importlib.import_module(__name__)  # the real torch
"""
BROKEN_TORCH = 'raise ImportError("torch is broken in this environment (test)")\n'

pytestmark = pytest.mark.slow


CLIENT = """
import json, os, sys, threading, urllib.request
import pytrio as trio
from pytrio.errors.base import PyTrioError
trio.configure_observability(enabled=False)
model, stats_url = sys.argv[1], sys.argv[2]
out = {}
def warmup_state():
    with urllib.request.urlopen(stats_url, timeout=10) as response:
        return json.load(response)["warmup"]["state"]
service = trio.ServiceClient()
training = service.create_lora_training_client(base_model=model, rank=8, seed=3)
tokens = training.get_tokenizer().encode("Question: what is a warm-up?\\nAnswer: work done early.")
datum = trio.Datum(
    model_input=trio.ModelInput.from_ints(tokens[:-1]),
    loss_fn_inputs={"target_tokens": tokens[1:]},
)
out["state_before_first_step"] = warmup_state()
try:
    release = os.environ.get("TRIO_TEST_SHIM_RELEASE")
    if release:  # the held warm-up may end 5 s into the first step, which waits for it
        threading.Timer(5.0, lambda: open(release, "w").close()).start()
    result = training.forward_backward([datum], "cross_entropy").result(timeout=300)
    out["logprobs"] = [float(x) for x in result.loss_fn_outputs[0]["logprobs"].to_numpy()]
except PyTrioError as error:
    out["step_error"] = str(error)
sampler = service.create_sampling_client(base_model=model)
try:
    sampler.sample(trio.ModelInput.from_ints(tokens), 1, trio.SamplingParams(max_tokens=4)).result(
        timeout=300
    )
except PyTrioError as error:
    out["sample_error"] = str(error)
print("RESULT " + json.dumps(out), flush=True)
"""


@dataclass
class Served:
    url: str
    env: dict[str, str]

    def stats(self) -> dict:
        with urllib.request.urlopen(f"{self.url}/trio-local/stats", timeout=10) as response:
            return json.load(response)

    def probe_seconds(self) -> float:
        started = time.perf_counter()
        with urllib.request.urlopen(f"{self.url}/", timeout=10):
            pass
        return time.perf_counter() - started

    def client(self) -> dict:
        """The client script's first step (per-token logprobs or the error) and first sample."""
        done = subprocess.run(
            [sys.executable, "-c", CLIENT, MODEL, f"{self.url}/trio-local/stats"],
            env=self.env,
            capture_output=True,
            check=False,
            text=True,
            timeout=600,
        )
        for line in done.stdout.splitlines():
            if line.startswith("RESULT "):
                return json.loads(line.removeprefix("RESULT "))
        raise AssertionError(f"the client failed:\n{done.stdout}\n{done.stderr[-3000:]}")


@contextmanager
def serve(
    tmp_path: Path,
    *options: str,
    shim: str | None = None,
    delay: float = 0.0,
    warmup_env: str | None = None,
    cache: Path | None = None,
) -> Iterator[Served]:
    """`trio-local serve` on a fresh data directory, and the environment a client needs."""
    release = str(tmp_path / "release-shim")
    env = {**os.environ, "TRIO_TEST_SHIM_DELAY_S": str(delay), "TRIO_TEST_SHIM_RELEASE": release}
    # A cache of this module's own (or of this service alone): the weights a service seeds are
    # compared with another service's, never with files that other code may have written.
    env["TRIO_LOCAL_CACHE_DIR"] = str(cache or tmp_path / "cache")
    env.pop("TRIO_LOCAL_WARMUP", None)
    if warmup_env is not None:
        env["TRIO_LOCAL_WARMUP"] = warmup_env
    if shim is not None:
        package = tmp_path / "shim" / "torch"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text(textwrap.dedent(shim), encoding="utf-8")
        env["PYTHONPATH"] = os.pathsep.join([str(package.parent), env.get("PYTHONPATH", "")])
    command = [sys.executable, "-m", "trio_local.cli", "serve", "--port", "0"]
    command += ["--api-key", KEY, "--data-dir", str(tmp_path / "data"), *options]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().split()[-1]
        client_env = {**os.environ, "PYTRIO_BASE_URL": url, "PYTRIO_API_KEY": KEY}
        if shim is not None:
            client_env["TRIO_TEST_SHIM_RELEASE"] = release
        for line in process.stdout:  # where the SDK finds the offline tokenizer
            if line.startswith("export MODELSCOPE_CACHE="):
                client_env["MODELSCOPE_CACHE"] = line.strip().split("=", 1)[1]
                break
        yield Served(url, client_env)
    finally:
        process.terminate()
        process.wait(30)


@pytest.fixture(scope="module")
def module_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for the services of this module that need no cold one: the tokenizer is built
    once for them (each build is several CPU-seconds), not once per service."""
    return tmp_path_factory.mktemp("warmup-cache")


def test_a_request_during_warm_up_waits_for_it_and_gets_an_unwarmed_services_answer(
    tmp_path, module_cache
) -> None:
    # No warm-up and no weights cache: the model is seeded afresh for the first request.
    with serve(
        tmp_path / "plain", "--no-warmup", "--no-weights-cache", cache=module_cache
    ) as plain:
        time.sleep(1.0)
        assert plain.stats()["warmup"]["state"] == "off"
        assert plain.stats()["engine_timings"] == {}  # nothing imported or built before a request
        expected = plain.client()
        assert plain.stats()["warmup"]["models_built"] == 1
    assert expected["state_before_first_step"] == "off"
    assert "logprobs" in expected and "sample_error" not in expected

    # Warm-up held open by a slow import of torch (until 5 s into the client's first step, at
    # most 120 s): the service answers at once meanwhile, run creation (which needs the
    # tokenizer, not torch) does not wait for it, and the first forward_backward arrives before
    # the warm-up's model is ready.
    with serve(tmp_path / "warm", shim=SLOW_TORCH, delay=120.0, cache=module_cache) as warm:
        assert warm.stats()["warmup"]["state"] == "warming"
        assert warm.probe_seconds() < 1.0
        got = warm.client()
        after = warm.stats()["warmup"]
    assert got["state_before_first_step"] == "warming"
    assert got["logprobs"] == expected["logprobs"]
    assert "sample_error" not in got
    assert after["state"] == "ready"
    assert after["model"] == MODEL
    # the warm-up's model served the request: it was built (or loaded) once, not twice
    assert after["models_built"] + after["models_from_cache"] == 1


def test_a_broken_warm_up_is_a_clear_error_on_the_first_request(tmp_path) -> None:
    # A cold cache: the tokenizer is built without torch, so run creation still succeeds and the
    # broken model build is reported by the first step and the first sample.
    with serve(tmp_path, shim=BROKEN_TORCH) as broken:
        assert broken.probe_seconds() < 1.0
        got = broken.client()
        warmup = broken.stats()["warmup"]
    for error in (got["step_error"], got["sample_error"]):  # raised, not a hang
        assert "could not set up its stand-in model for " + MODEL in error
        assert "torch is broken in this environment" in error
        assert "pytrio-skill[local]" in error  # the fix
    assert warmup["state"] == "failed"
    assert "torch is broken" in warmup["error"]


def test_warmup_model_option_and_env_switch(tmp_path, module_cache) -> None:
    other = "Qwen/Qwen3-0.6B"
    with serve(tmp_path / "other", "--warmup-model", other, cache=module_cache) as served:
        deadline = time.monotonic() + 300
        while served.stats()["warmup"]["state"] == "warming" and time.monotonic() < deadline:
            time.sleep(0.5)
        assert served.stats()["warmup"] == {
            **served.stats()["warmup"],
            "state": "ready",
            "model": other,
        }
    done = subprocess.run(
        [sys.executable, "-m", "trio_local.cli", "serve", "--warmup-model", "meta-llama/Llama-3"],
        capture_output=True,
        check=False,
        text=True,
        env={**os.environ, "TRIO_LOCAL_DATA_DIR": str(tmp_path / "bad")},
        timeout=120,
    )
    assert done.returncode == 2
    assert "--warmup-model" in done.stderr
    with serve(tmp_path / "env", warmup_env="0", cache=module_cache) as served:
        assert served.stats()["warmup"]["state"] == "off"
