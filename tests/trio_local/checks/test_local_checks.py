"""`--check`: each runtime data check, driven by the real SDK over HTTP against trio-local.

Every check has a script that makes its mistake (the check must report it, under the trio-lint
rule code from trio-lint's registry where one exists) and the clean runs below, which must
report nothing at all. Each script trains its own run, so findings are read per run id from
`/trio-local/stats` (what `trio-local stats` prints).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("torch")
import pytrio as trio

import trio_local
from tests.support.local import serve_until_signalled
from trio_lint.rules import get_rule

MODEL = "Qwen/Qwen3-4B-Instruct-2507"
QUESTION = "What is the capital of France?"
ANSWER = "Paris is the capital."
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def service() -> Iterator[trio_local.LocalService]:
    trio.configure_observability(enabled=False)
    with trio_local.serve_in_background(check=True) as running:
        yield running


@pytest.fixture(scope="module")
def client(service: trio_local.LocalService) -> trio.ServiceClient:
    return trio.ServiceClient()


@pytest.fixture(scope="module")
def tokenizer(client: trio.ServiceClient):
    return client.create_lora_training_client(base_model=MODEL, rank=4).get_tokenizer()


def report(service: trio_local.LocalService, run_id: str = "", *, key: bool = True) -> dict:
    headers = {"X-API-Key": service.api_key} if key else {}
    url = service.env["TRIO_LOCAL_STATS_URL"] + (f"?run={run_id}" if run_id else "")
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as reply:
        return json.load(reply)["checks"]


def findings(service: trio_local.LocalService, run_id: str) -> dict[str, dict]:
    checked = report(service, run_id)
    assert checked["check_errors"] == {} and checked["dropped"] == 0, checked
    return {f["check"]: f for f in checked["findings"]}


def code(rule_name: str) -> str:
    rule = get_rule(rule_name)
    assert rule is not None, rule_name
    return rule.code


def new_run(client: trio.ServiceClient) -> trio.TrainingClient:
    return client.create_lora_training_client(base_model=MODEL, rank=4)


def chat_parts(tokenizer, *, end: bool = True) -> tuple[list[int], list[int]]:
    prompt = tokenizer.apply_chat_template(
        [
            {"role": "system", "content": "Answer briefly."},
            {"role": "user", "content": QUESTION},
        ],
        tokenize=False,
        add_generation_prompt=True,
    )
    completion = ANSWER + ("<|im_end|>" if end else "")
    return tokenizer.encode(prompt), tokenizer.encode(completion)


def sft_datum(tokenizer, *, end: bool = True, prompt_weight: float = 0.0) -> trio.Datum:
    """The right chat SFT datum (shifted, prompt weighted 0, <|im_end|> trained) or a variant."""
    prompt, completion = chat_parts(tokenizer, end=end)
    tokens = prompt + completion
    weights = [prompt_weight] * len(prompt) + [1.0] * len(completion)
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": tokens[1:], "weights": weights[1:]},
    )


def policy_datum(
    tokenizer, *, advantage: float = 1.0, prompt_advantage: float = 0.0, completion=None
) -> trio.Datum:
    """A GRPO-style datum: sampler logprobs 0.0 on the prompt, advantages masking it."""
    prompt, sampled = chat_parts(tokenizer)
    sampled = sampled if completion is None else completion
    tokens = prompt + sampled
    logprobs = [0.0] * len(prompt) + [-1.5] * len(sampled)
    advantages = [prompt_advantage] * len(prompt) + [advantage] * len(sampled)
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={
            "target_tokens": tokens[1:],
            "logprobs": logprobs[1:],
            "advantages": advantages[1:],
        },
    )


def step(training: trio.TrainingClient, data, loss: str = "cross_entropy", lr: float = 1e-3):
    fb = training.forward_backward(data, loss)
    optim = training.optim_step(trio.AdamParams(learning_rate=lr))
    fb.result()
    optim.result()


def test_every_check_names_a_real_trio_lint_rule_or_none() -> None:
    from trio_local.checks.runtime import CHECKS

    names = [check.name for check in CHECKS]
    assert len(names) == len(set(names))
    for check in CHECKS:
        if check.rule is not None:
            assert get_rule(check.rule) is not None, check.rule


# clean runs: every check stays silent


def test_a_clean_chat_sft_run_reports_nothing(service, client, tokenizer) -> None:
    training = new_run(client)
    batch = [sft_datum(tokenizer)]
    for _ in range(5):
        step(training, batch, lr=1e-3)
    training.save_state("clean-step-5").result()
    training.save_weights_for_sampler("clean-sampler-5").result()
    training.forward(batch, "cross_entropy").result()
    assert findings(service, training.training_run_cuid) == {}


def test_a_clean_on_policy_loop_reports_nothing(service, client, tokenizer) -> None:
    training = new_run(client)
    prompt, _ = chat_parts(tokenizer)
    params = trio.SamplingParams(max_tokens=4, temperature=1.0)
    for _ in range(4):
        sampler = training.save_weights_and_get_sampling_client()  # fresh every update
        sequence = (
            sampler.sample(trio.ModelInput.from_ints(prompt), 1, params).result().sequences[0]
        )
        step(training, [policy_datum(tokenizer, completion=list(sequence.tokens))], "ppo")
    assert findings(service, training.training_run_cuid) == {}


def test_placeholder_targets_on_a_masked_prompt_report_nothing(service, client, tokenizer) -> None:
    # pytrio-cookbook 0.1.0's GRPO datum: target 0 on prompt positions, advantage 0 there.
    training = new_run(client)
    prompt, sampled = chat_parts(tokenizer)
    datum = trio.Datum(
        model_input=trio.ModelInput.from_ints(prompt + sampled[:-1]),
        loss_fn_inputs={
            "target_tokens": [0] * (len(prompt) - 1) + sampled,
            "logprobs": [0.0] * (len(prompt) - 1) + [-1.5] * len(sampled),
            "advantages": [0.0] * (len(prompt) - 1) + [0.5] * len(sampled),
        },
    )
    training.forward_backward([datum], "importance_sampling").result()
    assert findings(service, training.training_run_cuid) == {}


# one script per mistake


def test_unshifted_targets_are_reported_as_ptr305(service, client, tokenizer) -> None:
    training = new_run(client)
    prompt, completion = chat_parts(tokenizer)
    tokens = prompt + completion
    datum = trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens),
        loss_fn_inputs={
            "target_tokens": tokens,
            "weights": [0.0] * len(prompt) + [1.0] * len(completion),
        },
    )
    training.forward_backward([datum], "cross_entropy").result()
    found = findings(service, training.training_run_cuid)
    assert found["unshifted-targets"]["rule"] == code("unshifted-targets") == "PTR305"
    example = found["unshifted-targets"]["example"]
    assert example["equal_positions"] == f"{len(tokens)} of {len(tokens)}"


def test_minus_100_in_weights_is_reported_as_ptr301(service, client, tokenizer) -> None:
    training = new_run(client)
    prompt, completion = chat_parts(tokenizer)
    tokens = prompt + completion
    weights = [-100.0] * len(prompt) + [1.0] * len(completion)  # HF labels habit, as weights
    datum = trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": tokens[1:], "weights": weights[1:]},
    )
    training.forward_backward([datum], "cross_entropy").result()
    found = findings(service, training.training_run_cuid)["minus-100"]
    assert found["rule"] == code("minus-100-mask") == "PTR301"
    assert found["example"]["field"] == "weights"


def test_weights_on_the_prompt_of_a_chat_are_reported(service, client, tokenizer) -> None:
    training = new_run(client)
    training.forward_backward([sft_datum(tokenizer, prompt_weight=1.0)], "cross_entropy").result()
    found = findings(service, training.training_run_cuid)
    assert set(found) == {"prompt-tokens-trained"}
    parts = found["prompt-tokens-trained"]["example"]["by_part"]
    assert {"system", "user", "header"} <= set(parts)
    assert found["prompt-tokens-trained"]["rule"] is None


def test_a_completion_without_its_end_token_is_reported(service, client, tokenizer) -> None:
    training = new_run(client)
    training.forward_backward([sft_datum(tokenizer, end=False)], "cross_entropy").result()
    found = findings(service, training.training_run_cuid)
    assert set(found) == {"eos-not-trained"}
    assert found["eos-not-trained"]["count"] == 1


def test_an_end_token_with_weight_zero_is_reported(service, client, tokenizer) -> None:
    training = new_run(client)
    prompt, completion = chat_parts(tokenizer)
    tokens = prompt + completion
    weights = [0.0] * len(prompt) + [1.0] * (len(completion) - 1) + [0.0]
    datum = trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": tokens[1:], "weights": weights[1:]},
    )
    training.forward_backward([datum], "cross_entropy").result()
    assert set(findings(service, training.training_run_cuid)) == {"eos-not-trained"}


def test_a_prompt_masked_with_weights_under_a_policy_loss_is_ptr304(
    service, client, tokenizer
) -> None:
    training = new_run(client)
    prompt, completion = chat_parts(tokenizer)
    tokens = prompt + completion
    logprobs = [0.0] * len(prompt) + [-1.5] * len(completion)
    datum = trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={
            "target_tokens": tokens[1:],
            "logprobs": logprobs[1:],
            "advantages": [1.0] * (len(tokens) - 1),  # the prompt is "masked" below, in vain
            "weights": ([0.0] * len(prompt) + [1.0] * len(completion))[1:],
        },
    )
    training.forward_backward([datum], "importance_sampling").result()
    found = findings(service, training.training_run_cuid)
    assert set(found) == {"policy-loss-prompt"}
    assert found["policy-loss-prompt"]["rule"] == code("policy-loss-weights") == "PTR304"


def test_a_policy_step_with_only_zero_advantages_is_reported(service, client, tokenizer) -> None:
    training = new_run(client)
    step(training, [policy_datum(tokenizer, advantage=0.0)] * 2, "importance_sampling")
    found = findings(service, training.training_run_cuid)
    assert set(found) == {"all-advantages-zero"}
    assert found["all-advantages-zero"]["example"]["data"] == 2


def test_a_nan_learning_rate_is_reported(service, client, tokenizer) -> None:
    training = new_run(client)
    training.forward_backward([sft_datum(tokenizer)], "cross_entropy").result()
    with pytest.raises(Exception):  # noqa: B017 - how the service refuses it is not the point
        training.optim_step(trio.AdamParams(learning_rate=math.nan)).result()
    found = findings(service, training.training_run_cuid)
    assert "non-finite" in found
    assert found["non-finite"]["example"]["field"] == "adam_params.learning_rate"


def test_an_infinite_loss_config_value_is_reported(service, client, tokenizer) -> None:
    training = new_run(client)
    config = {"clip_low_threshold": 0.8, "clip_high_threshold": math.inf}
    with contextlib.suppress(Exception):  # whether the service refuses it is not the point
        training.forward_backward([policy_datum(tokenizer)], "ppo", config).result()
    found = findings(service, training.training_run_cuid)
    assert set(found) == {"non-finite"}
    assert found["non-finite"]["example"]["field"] == "loss.config.clip_high_threshold"


def test_a_loss_that_climbs_under_a_high_learning_rate_is_reported(
    service, client, tokenizer
) -> None:
    training = new_run(client)
    batch = [sft_datum(tokenizer)]
    for _ in range(6):
        step(training, batch, lr=0.3)
    found = findings(service, training.training_run_cuid)
    assert "loss-rising" in found, found
    assert found["loss-rising"]["example"]["learning_rate"] == 0.3


def test_rollouts_from_a_sampler_several_updates_old_are_ptr405(service, client, tokenizer) -> None:
    training = new_run(client)
    prompt, _ = chat_parts(tokenizer)
    params = trio.SamplingParams(max_tokens=4, temperature=1.0)
    sampler = training.save_weights_and_get_sampling_client()  # made once, before the loop
    for _ in range(4):
        sequence = (
            sampler.sample(trio.ModelInput.from_ints(prompt), 1, params).result().sequences[0]
        )
        step(training, [policy_datum(tokenizer, completion=list(sequence.tokens))], "ppo")
    found = findings(service, training.training_run_cuid)
    assert set(found) == {"stale-sampler"}
    assert found["stale-sampler"]["rule"] == code("stale-sampler") == "PTR405"
    assert found["stale-sampler"]["example"]["sampled_at_optimizer_steps"] == [2, 3]


def test_a_reused_checkpoint_name_is_reported(service, client, tokenizer) -> None:
    training = new_run(client)
    step(training, [sft_datum(tokenizer)])
    training.save_state("checkpoint").result()
    step(training, [sft_datum(tokenizer)])
    with pytest.raises(trio.PyTrioError):  # the default overwrite=False refuses it
        training.save_state("checkpoint").result()
    found = findings(service, training.training_run_cuid)
    assert set(found) == {"checkpoint-name-reused"}
    assert found["checkpoint-name-reused"]["example"]["outcome"] == "failed"


def test_examples_are_hidden_from_callers_without_the_key(service) -> None:
    listed = report(service, key=False)["findings"]
    assert listed and all(f["example"] is None for f in listed)
    assert report(service)["findings"][0]["example"] is not None


def test_trio_local_stats_prints_the_report(service) -> None:
    env = {**os.environ, "PYTRIO_API_KEY": service.api_key}
    process = subprocess.run(
        [sys.executable, "-m", "trio_local.cli", "stats", "--url", service.base_url],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert process.returncode == 0, process.stderr
    assert "trio-local check:" in process.stdout
    assert "PTR305  unshifted-targets" in process.stdout


MISTAKE_SCRIPT = """
import pytrio as trio
client = trio.ServiceClient()
training = client.create_lora_training_client(base_model="Qwen/Qwen3-4B-Instruct-2507", rank=4)
tokens = training.get_tokenizer().encode("The quick brown fox jumps over the lazy dog.")
datum = trio.Datum(model_input=trio.ModelInput.from_ints(tokens),
                   loss_fn_inputs={"target_tokens": tokens})
training.forward_backward([datum], "cross_entropy").result()
print("trained")
"""


def test_trio_local_run_check_prints_and_writes_the_report(tmp_path: Path) -> None:
    script = tmp_path / "unshifted.py"
    script.write_text(MISTAKE_SCRIPT, encoding="utf-8")
    out = tmp_path / "report.json"
    command = [sys.executable, "-m", "trio_local.cli", "run", "--data-dir", str(tmp_path / "d")]
    process = subprocess.run(
        [*command, "--check-report", str(out), sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert process.returncode == 0, process.stderr[-3000:]
    assert process.stdout.strip() == "trained"  # the child's output is left alone
    assert "PTR305  unshifted-targets" in process.stderr
    written = json.loads(out.read_text(encoding="utf-8"))
    assert [f["check"] for f in written["findings"]] == ["unshifted-targets"]
    assert written["findings"][0]["count"] == 1
    assert written["observed"]["data"] == 1
    assert 0 < written["observed"]["checker_cpu_s"] < 30


def test_trio_local_serve_check_reports_when_stopped(tmp_path: Path) -> None:
    out = tmp_path / "serve-report.json"
    command = [sys.executable, "-m", "trio_local.cli", "serve", "--port", "0", "--check"]
    command += ["--data-dir", str(tmp_path / "d"), "--check-report", str(out)]
    returncode, stderr = serve_until_signalled(
        command, lambda process: process.send_signal(signal.SIGTERM), timeout=120
    )
    assert returncode == 0, stderr
    assert "no data mistakes found" in stderr
    assert json.loads(out.read_text(encoding="utf-8"))["findings"] == []
