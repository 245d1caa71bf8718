"""Every example runs to completion against trio-local and shows its real outcome.

One trio-local service (a thread of this process) serves the examples; each example runs as its
own process with the environment `trio-local run` would give it, except examples 01 and 11 (the
vision example), which run through the `trio-local run` console script itself. The outcome is
parsed from what the example prints, which is what a user would look at. The services run with
`--check`: the runtime data checks must find nothing in any example.
"""

import gc
import json
import os
import re
import runpy
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

pytest.importorskip("torch")  # the `local` extra: trio-local trains a real model

from pytrio_facts import vision
from trio_local.background import LocalService, serve_in_background

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
TIMEOUT = 600

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def service() -> Iterator[LocalService]:
    with serve_in_background(configure_sdk=False, check=True) as running:
        yield running


def run_python(service: LocalService, *args: str) -> subprocess.CompletedProcess[str]:
    """`python ARGS` with the environment `trio-local run` would give it."""
    return subprocess.run(
        [sys.executable, *args],
        env={**os.environ, **service.env},
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def run_example(service: LocalService, name: str, *args: str) -> str:
    process = run_python(service, str(EXAMPLES / name), *args)
    assert process.returncode == 0, f"{name} failed:\n{process.stdout}\n{process.stderr[-4000:]}"
    assert_no_data_mistakes(service)
    return process.stdout


def read_check_report(service: LocalService) -> dict:
    request = urllib.request.Request(
        service.env["TRIO_LOCAL_STATS_URL"], headers={"X-API-Key": service.api_key}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)["checks"]


def assert_no_data_mistakes(service: LocalService) -> None:
    """The service's --check report so far is clean (every example before this one was too)."""
    report = read_check_report(service)
    assert report["observed"]["events"] > 0
    assert report["findings"] == [], json.dumps(report["findings"], indent=2)
    assert report["check_errors"] == {} and report["dropped"] == 0, report


def floats(pattern: str, text: str) -> list[float]:
    return [float(value) for value in re.findall(pattern, text)]


def run_under_trio_local_run(tmp_path: Path, name: str, *args: str):
    """`trio-local run --check-report ... python EXAMPLE ARGS`: the console script a user runs,
    with a service of its own; returns the process and its check report."""
    trio_local = shutil.which("trio-local", path=str(Path(sys.executable).parent))
    assert trio_local, "the trio-local console script is not installed"
    report = tmp_path / "check.json"
    command = [trio_local, "run", "--data-dir", str(tmp_path), "--check-report", str(report)]
    process = subprocess.run(
        [*command, sys.executable, str(EXAMPLES / name), *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert process.returncode == 0, f"{name} failed:\n{process.stdout}\n{process.stderr[-4000:]}"
    return process, json.loads(report.read_text(encoding="utf-8"))


def test_01_sft_loss_falls_and_the_trained_completions_are_sampled(tmp_path) -> None:
    # Through the `trio-local run` console script itself (the one example that is): the
    # example runs unchanged under it, and its --check report is clean.
    process, report = run_under_trio_local_run(tmp_path, "01_train_sft.py")
    assert "no data mistakes found" in process.stderr
    assert report["findings"] == [] and report["observed"]["events"] > 0, report
    assert report["check_errors"] == {} and report["dropped"] == 0, report
    out = process.stdout
    assert re.search(r"^saved \S+", out, re.M)
    losses = floats(r"step \d+ loss ([\d.]+)", out)
    assert len(losses) == 30
    assert losses[-1] < losses[0] / 10, losses
    samples = re.findall(r"sample '.*?' -> '(.*?)' \(trained '(.*?)'\)", out)
    assert len(samples) == 4
    for text, trained in samples:
        assert text.startswith(trained), samples


def test_03_resume_continues_from_the_saved_step_with_the_same_weights(service) -> None:
    out = run_example(service, "03_checkpoint_resume.py", "--steps", "10", "--save-at", "5")
    steps = [int(s) for s in re.findall(r"^step (\d+) ", out, re.M)]
    assert steps == list(range(10))
    before = float(re.search(r"saved step 5 eval ([\d.]+)", out).group(1))
    after = float(re.search(r"resumed step 5 eval ([\d.]+)", out).group(1))
    assert after == pytest.approx(before, abs=1e-3)
    weights_only = float(re.search(r"weights-only eval ([\d.]+)", out).group(1))
    assert weights_only == pytest.approx(before, abs=1e-3)
    losses = floats(r"step \d+ loss ([\d.]+)", out)
    assert losses[5] < losses[0]  # the resumed run did not start from scratch
    assert losses[-1] < losses[5]  # and kept learning


def test_02_inference_samples_scores_and_repeats_greedy(service) -> None:
    # After test_03: inference alone gives the checks nothing to observe, and the report
    # read after each example must show that the checks did observe the examples' training.
    out = run_example(service, "02_inference.py", "--num-samples", "3", "--max-tokens", "8")
    assert "3 samples" in out
    counts = re.findall(r"sample \d+ stop=\w+ tokens=(\d+) logprobs=(\d+)", out)
    assert len(counts) == 3
    assert all(t == lp and 0 < int(t) <= 8 for t, lp in counts)
    assert "greedy repeatable True" in out
    scored, prompt_tokens = map(int, re.search(r"logprobs (\d+) for (\d+) tokens", out).groups())
    assert scored == prompt_tokens
    assert len(re.findall(r"^async ", out, re.M)) == 3


def test_04_rest_lists_downloads_and_deletes(service) -> None:
    out = run_example(service, "04_model_management.py")
    assert "Qwen/Qwen3-4B-Instruct-2507" in out
    written, on_disk = map(int, re.search(r"downloaded (\d+) bytes, on disk (\d+)", out).groups())
    assert written > 0 and written == on_disk
    assert "checkpoints before delete 2 after 1" in out


def test_05_grpo_reward_rises_after_the_warm_start(service) -> None:
    # Seeded sampling: one repeatable trajectory (unseeded, one run in about fifteen fell short).
    example = str(EXAMPLES / "05_grpo_importance_sampling.py")
    process = run_python(service, example, "--steps", "6", "--seed", "0")
    assert process.returncode == 0, process.stderr[-4000:]
    assert_no_data_mistakes(service)
    out = process.stdout
    rewards = floats(r"step \d+ reward ([\d.]+)", out)
    assert len(rewards) == 6
    # Step 0 samples the warm start's policy, before any RL update: the baseline. Step 1 already
    # follows one update and lands anywhere from 0.3 to 0.97 across runs, so a baseline that
    # includes it fails the faster a run learns (it did, at a gain of 0.14). Over 11 runs step 0
    # was 0.41-0.56 and the last two steps' mean 0.84-1.0.
    assert sum(rewards[-2:]) / 2 > rewards[0] + 0.2, rewards
    assert rewards[-1] >= 0.75, rewards


def test_06_pipelined_updates_take_fewer_cycles_than_serial() -> None:
    # A clock with a real cycle length (trio-local run's default) so the patterns can differ.
    with serve_in_background(configure_sdk=False, cycle_ms=200, check=True) as clocked:
        out = run_example(clocked, "06_async_pipeline.py", "--updates", "3")
    pattern = r"pattern ([\w-]+) seconds_per_update [\d.]+ cycles_per_update (\S+)"
    rows = dict(re.findall(pattern, out))
    assert set(rows) == {"serial", "submit-then-wait", "pipelined", "pipelined-async"}
    assert "n/a" not in rows.values(), out
    assert float(rows["pipelined"]) < float(rows["submit-then-wait"]) < float(rows["serial"])
    assert float(rows["pipelined-async"]) < float(rows["submit-then-wait"])


def test_07_dpo_custom_loss_learns_the_preferences(service) -> None:
    out = run_example(service, "07_custom_loss_dpo.py", "--steps", "6")
    losses = floats(r"dpo_loss ([\d.]+)", out)
    margins = floats(r"margin (-?[\d.]+)", out)
    assert losses[0] == pytest.approx(0.6931, abs=1e-3)  # log 2: policy == reference at step 0
    assert losses[-1] < losses[0] and margins[-1] > 0
    assert re.findall(r"accuracy ([\d.]+)", out)[-1] == "1.00"


def service_tokenizer(service: LocalService):
    """The tokenizer trio-local serves (what `get_tokenizer()` returns under it): its chat
    template is the one the mask must agree with."""
    from trio_local.engine.tokenizer import load_tokenizer

    directory = service.data_dir / "tokenizer" / "qwen3"
    deadline = time.monotonic() + TIMEOUT
    while not (directory / "tokenizer.json").is_file():  # built in the background at start
        assert time.monotonic() < deadline, "trio-local never built its tokenizer"
        time.sleep(0.5)
    return load_tokenizer(directory)


CONVERSATION = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Capital of France?"},
    {"role": "assistant", "content": "Paris, on the Seine."},
    {"role": "user", "content": "And of Italy?"},
    {"role": "assistant", "content": "Rome.\nSince 1871."},
    {"role": "user", "content": "Spain?"},
    {"role": "assistant", "content": "Madrid"},
]


def weighted_runs(weights: list[float]) -> list[tuple[int, int]]:
    runs, start = [], None
    for index, weight in enumerate([*weights, 0.0]):
        if weight and start is None:
            start = index
        elif not weight and start is not None:
            runs.append((start, index))
            start = None
    return runs


def test_08_chat_mask_trains_every_assistant_turn_of_the_template(service) -> None:
    tokenizer = service_tokenizer(service)
    example = runpy.run_path(str(EXAMPLES / "08_multiturn_chat_sft.py"))
    tokens, weights = example["chat_tokens_and_weights"](tokenizer, CONVERSATION)
    whole = tokenizer.apply_chat_template(CONVERSATION, tokenize=False)
    assert tokens == tokenizer.encode(whole, add_special_tokens=False)
    assert set(weights) == {0.0, 1.0}
    runs = weighted_runs(weights)
    answers = [m["content"] for m in CONVERSATION if m["role"] == "assistant"]
    assert [tokenizer.decode(tokens[a:b]) for a, b in runs] == [
        answer + tokenizer.eos_token for answer in answers
    ]
    for _, end in runs:  # the template's newline after the end-of-turn token is not trained
        assert tokenizer.decode(tokens[end : end + 1]) == "\n" and weights[end] == 0.0
    datum = example["chat_datum"](tokenizer, CONVERSATION)
    assert datum.model_input.to_ints() == tokens[:-1]
    assert datum.loss_fn_inputs["target_tokens"].tolist() == tokens[1:]
    assert datum.loss_fn_inputs["weights"].tolist() == weights[1:]


def test_08_chat_mask_refuses_a_template_that_rewrites_earlier_turns(service) -> None:
    tokenizer = service_tokenizer(service)
    example = runpy.run_path(str(EXAMPLES / "08_multiturn_chat_sft.py"))

    class DropsOldAnswers:  # like templates that strip old <think> blocks from history
        eos_token = tokenizer.eos_token

        def encode(self, text, add_special_tokens):
            return tokenizer.encode(text, add_special_tokens=add_special_tokens)

        def apply_chat_template(self, messages, tokenize, add_generation_prompt=False):
            last = max(i for i, m in enumerate(messages) if m["role"] != "assistant")
            shown = [
                {**m, "content": "..."} if m["role"] == "assistant" and i < last else m
                for i, m in enumerate(messages)
            ]
            return tokenizer.apply_chat_template(
                shown, tokenize=tokenize, add_generation_prompt=add_generation_prompt
            )

    with pytest.raises(ValueError, match="one datum per assistant turn"):
        example["chat_tokens_and_weights"](DropsOldAnswers(), CONVERSATION)


def test_08_multiturn_sft_learns_every_turn(service) -> None:
    out = run_example(service, "08_multiturn_chat_sft.py", "--steps", "25")
    assert re.findall(r"assistant_turns (\d+)", out) == ["2", "2"]
    losses = floats(r"step \d+ loss ([\d.]+)", out)
    assert len(losses) == 25 and losses[-1] < losses[0] / 10, losses
    samples = re.findall(r"sample '(.*?)' -> '(.*?)' \(trained '(.*?)'\)", out)
    assert len(samples) == 4  # the first answer of each conversation is sampled too
    for _, text, trained in samples:
        assert text == trained, samples
    # trio-local keeps the stop token in tokens and logprobs and leaves it out of the text
    stops = re.findall(r"^stop .*$", out, re.M)
    expected = (
        "stop stop stop_token_in_tokens True logprobs_per_token True stop_token_in_text False"
    )
    assert stops == [expected] * 4, stops


def test_09_newest_checkpoint_names_ids_paths_and_download() -> None:
    # Its own service: the example saves a name twice on purpose, which --check must report.
    with serve_in_background(configure_sdk=False, check=True) as own:
        process = run_python(own, str(EXAMPLES / "09_newest_checkpoint.py"))
        assert process.returncode == 0, process.stderr[-4000:]
        report = read_check_report(own)
    assert [f["check"] for f in report["findings"]] == ["checkpoint-name-reused"], report
    assert report["findings"][0]["example"]["outcome"] == "failed"  # refused, as printed below
    out = process.stdout
    saved = re.findall(r"^attempt \d run (\S+) saved (\S+)$", out, re.M)
    assert len(saved) == 2 and saved[0][1] != saved[1][1]  # a re-run's step-10 is a new path
    assert "same name in two runs gives two checkpoints: True" in out
    assert re.search(r"duplicate name refused: \w+ code checkpoint_exists", out)
    assert "overwrite keeps the path: True" in out
    assert "a sampler checkpoint may share the name: True" in out
    assert "checkpoint_id as path refused: ControlAPIError" in out
    newest = re.search(r"newest checkpoint (\S+) of run (\S+)", out).groups()
    assert newest == (saved[1][1], saved[1][0])
    fields = (
        "['checkpoint_id', 'checkpoint_type', 'expires_at', 'path', 'public', 'size_bytes', 'time']"
    )
    assert f"checkpoint fields {fields}" in out  # no name field
    assert "time is datetime tz True" in out
    assert re.search(r"resumed from the newest checkpoint, loss [\d.]+", out)
    assert re.search(r"download wrote one file True [1-9]\d*", out)
    assert "archive members ['step-10/adapter_config.json'" in out
    assert "a directory as destination fails: IsADirectoryError" in out
    assert "path as checkpoint_id refused: code control.request_failed status 404" in out
    assert "deleted the 3 checkpoints this script saved" in out


def test_10_tinker_port_trains_and_keeps_tinkers_loss_normalisation(service) -> None:
    # Before the tests below that send mistakes on purpose: run_example checks the report.
    source = (EXAMPLES / "10_port_from_tinker.py").read_text(encoding="utf-8")
    assert not re.search(r"^\s*(import|from) tinker\b", source, re.M)  # the port is pytrio code
    out = run_example(service, "10_port_from_tinker.py", "--steps", "6")
    rows = re.findall(r"step \d+ loss ([\d.]+) loss_sum/weights ([\d.]+) tokens (\d+)", out)
    assert len(rows) == 6
    for mean, tinker_style, _tokens in rows:  # loss_mean is Tinker's loss:sum / sum(weights)
        assert float(mean) == pytest.approx(float(tinker_style), abs=1e-3)
    losses = [float(mean) for mean, _, _ in rows]
    assert losses[-1] < losses[0] / 2, losses  # 11.6 -> 4.1 in six steps on trio-local
    assert re.search(r"^saved trio://\S+/sampler_weights/tinker-port-final$", out, re.M)
    samples = re.findall(r"sample '.*?' -> '(.*?)' \(trained '(.*?)'\)", out)
    assert len(samples) == 2


def test_11_vision_trains_on_a_generated_png_and_samples_the_answers(tmp_path) -> None:
    # Through the `trio-local run` console script, as the vision page tells users to try it: the
    # service sizes the image as the processor does, so a wrong expected_tokens would fail here.
    process, report = run_under_trio_local_run(tmp_path, "11_vision_sft.py")
    assert report["findings"] == [] and report["observed"]["events"] > 0, report
    assert report["check_errors"] == {} and report["dropped"] == 0, report
    out = process.stdout
    model, size, count = re.search(
        r"^model (\S+) image (\d+x\d+) expected_tokens (\d+)$", out, re.M
    ).groups()
    width, height = map(int, size.split("x"))
    assert int(count) == vision.image_tokens(model, width, height) == 70  # 64x48 on Qwen3.5
    length, text = map(int, re.search(r"prompt length (\d+) \(text (\d+) \+ image\)", out).groups())
    assert length == text + int(count)
    losses = floats(r"step \d+ loss ([\d.]+)", out)
    assert len(losses) == 10 and losses[-1] < losses[0] / 10, losses
    samples = re.findall(r"sample -> '(.*?)' \(trained '(.*?)'\)", out)
    assert samples == [("red", "red"), ("blue", "blue")]  # the image decides the answer
    assert "compute_logprobs with an image: validation.image_logprobs_unsupported" in out


@pytest.fixture
def sdk_in_this_process(service: LocalService, monkeypatch: pytest.MonkeyPatch):
    """This process's pytrio pointed at the module's service: a short check through the real SDK
    and HTTP without a process of its own (each costs seconds of imports).

    pytrio 0.2.9 ends a dropped ServiceClient's session from a weakref finalizer that waits,
    without a timeout, for the service to answer. Left to the cyclic collector, that finalizer
    can run on the in-process service's own HTTP thread, which then waits for itself: a later
    example's first forward_backward never got an answer. Collected here at teardown, the
    finalizers run on this thread while the service is free to answer."""
    import pytrio as trio

    monkeypatch.setenv("MODELSCOPE_CACHE", service.env["MODELSCOPE_CACHE"])
    trio.configure(base_url=service.base_url, api_key=service.api_key)
    yield trio
    gc.collect()


def test_rl_iteration_without_advantage_sends_nothing_useful(sdk_in_this_process) -> None:
    # best-practices/rl.md: an all-zero-advantage batch has no loss and no counted tokens, and
    # an empty batch is refused by the SDK before anything is sent
    trio = sdk_in_this_process
    training = trio.ServiceClient().create_lora_training_client(
        base_model="Qwen/Qwen3-4B-Instruct-2507", rank=4
    )
    datum = trio.Datum(
        model_input=trio.ModelInput.from_ints([9707, 1879, 11]),
        loss_fn_inputs={
            "target_tokens": [1879, 11, 1879],
            "logprobs": [-1.0] * 3,
            "advantages": [0.0] * 3,
        },
    )
    metrics = training.forward_backward([datum], "importance_sampling").result().metrics
    assert {key: metrics[key] for key in ("loss_sum", "loss_mean", "token_count")} == {
        "loss_sum": 0.0,
        "loss_mean": 0.0,
        "token_count": 0,
    }, metrics
    with pytest.raises(trio.PyTrioError) as error:
        training.forward_backward([], "importance_sampling")
    assert error.value.code == "validation.empty_training_data"


def skill_scripts() -> list[str]:
    """SKILL.md's code blocks that are whole scripts (they make their own ServiceClient)."""
    text = (ROOT / "SKILL.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    return [b for b in blocks if re.search(r"^\s*(service = )?trio\.ServiceClient\(\)", b, re.M)]


# Each script runs as __main__ in a namespace of its own, one after the other in one process
# (a process each cost seconds of imports apiece and tested nothing more).
RUN_EACH = """
import sys
for index, script in enumerate(SCRIPTS):
    print(f"SCRIPT {index}", flush=True)
    exec(compile(script, f"<SKILL.md script {index}>", "exec"), {"__name__": "__main__"})
    print(f"DONE {index}", flush=True)
"""


def test_skill_md_scripts_run_unchanged(service) -> None:
    scripts = skill_scripts()
    assert len(scripts) >= 3
    process = run_python(service, "-c", f"SCRIPTS = {scripts!r}\n{RUN_EACH}")
    done = re.findall(r"^DONE (\d+)$", process.stdout, re.M)
    failed = scripts[len(done)] if len(done) < len(scripts) else ""
    assert process.returncode == 0, f"{failed}\n{process.stderr[-3000:]}"
    assert done == [str(index) for index in range(len(scripts))], process.stdout[-3000:]


def _python_block(page: str, defines: str) -> str:
    text = (ROOT / page).read_text(encoding="utf-8")
    return next(b for b in re.findall(r"```python\n(.*?)```", text, re.S) if defines in b)


GUESSED_FACTS = """
import re, runpy, time
import pytrio as trio

namespace = {}
exec(SAMPLE_EXACTLY, namespace)
exec(RESUME, namespace)
is_temporary = runpy.run_path(EXAMPLE_09)["is_temporary"]
service = trio.ServiceClient()
rest = service.create_rest_client()
training = service.create_lora_training_client(base_model="Qwen/Qwen3-4B-Instruct-2507", rank=4)
run_id = training.training_run_cuid
tokenizer = training.get_tokenizer()
prompt = tokenizer.encode("Q: two plus two?\\nA:", add_special_tokens=True)


def last_request():
    return rest.get_training_run(run_id).result().last_request_time


# 6: a sampler before any training call samples the fresh adapter; load_state is refused after it
created = last_request()
sampler = training.save_weights_and_get_sampling_client()
params = trio.SamplingParams(max_tokens=4, temperature=0.0)
before = sampler.sample(prompt=trio.ModelInput.from_ints(prompt), sampling_params=params).result()
base = service.create_sampling_client(base_model="Qwen/Qwen3-4B-Instruct-2507")
plain = base.sample(prompt=trio.ModelInput.from_ints(prompt), sampling_params=params).result()
same = before.sequences[0].tokens == plain.sequences[0].tokens
print("sampler before training is the base model", same)
try:
    training.load_state("trio://nowhere/weights/x").result()
except trio.PyTrioError as err:
    print("load_state after it:", err.code)
# 2: a fixed length without ignore_eos
tokens = namespace["sample_exactly"](sampler, prompt, 12, {tokenizer.eos_token_id})
print("sample_exactly gave", len(tokens))

# 5: last_request_time moves when the run starts, not with later steps and saves
started = last_request()
datum = trio.Datum(
    model_input=trio.ModelInput.from_ints([9707, 1879, 11]),
    loss_fn_inputs={"target_tokens": [1879, 11, 1879], "logprobs": [-1.0] * 3,
                    "advantages": [1.0, -1.0, 0.5]},
)
config = {"clip_low_threshold": 0.8, "clip_high_threshold": 1.2}
for _ in range(2):
    training.forward_backward([datum], "ppo", loss_fn_config=config).result()
    training.optim_step(trio.AdamParams(learning_rate=1e-3)).result()
state = training.save_state("facts-step-000007").result()
stayed = last_request() == started
print("last_request_time moved at start", started > created, "then stayed", stayed)

# 1: an unknown loss_fn_config key fails that call only
try:
    training.forward_backward([datum], "ppo", loss_fn_config={"epsilon": 0.2}).result()
except trio.PyTrioError as err:
    print("unknown key:", type(err).__name__, err.code)
metrics = training.forward_backward([datum], "ppo", loss_fn_config=config).result().metrics
print("trains after it", sorted(metrics))

# 4: the temporary weights are listed, with an expiry, and is_temporary tells them apart
named = training.save_weights_for_sampler("facts-named").result()
for checkpoint in rest.list_checkpoints(run_id).result().checkpoints:
    name = checkpoint.path.rsplit("/", 1)[-1]
    expires = checkpoint.expires_at
    ttl = (expires - checkpoint.time).total_seconds() if expires else None
    print("listed", checkpoint.checkpoint_type, name[:14], ttl, is_temporary(checkpoint))

# porting: after forward_backward_custom, loss_sum is the linear surrogate's, not your loss
def squared(data, logprobs):
    total = sum(lp.sum() for lp in logprobs)
    loss = total * total
    return loss, {"mine": float(loss)}


custom = training.forward_backward_custom([datum], squared).result().metrics
print("custom metrics", sorted(custom), round(custom["loss_sum"] / custom["mine"], 3))

# porting: pytrio's model_id is the base model's name; Tinker's is the run id RestClient takes
listed = rest.list_checkpoints(run_id).result() is not None
print("model_id", training.model_id, "run id listed", listed)
try:
    rest.list_checkpoints(training.model_id).result()
except trio.PyTrioError as err:
    print("list_checkpoints(model_id):", err.code, err.status_code)

# 5 (end): the run's time before this process exits and closes its session
print("run", run_id, "last", last_request().isoformat())
# 2: what a sequence stops on without ignore_eos
print("stop reasons", sorted({plain.sequences[0].stop_reason, before.sequences[0].stop_reason}))

# 6: the step comes back from the path
resumed, step = namespace["resume"](service, state.path)
print("resumed at step", step, type(resumed).__name__, state.path.endswith("/facts-step-000007"))
"""


def test_guessed_facts_hold_under_trio_local(service, sdk_in_this_process) -> None:
    sample_exactly = _python_block("references/sampling-client.md", "def sample_exactly")
    resume = _python_block("best-practices/checkpoints.md", "def resume")
    script = (
        f"SAMPLE_EXACTLY = {sample_exactly!r}\n"
        f"RESUME = {resume!r}\n"
        f"EXAMPLE_09 = {str(EXAMPLES / '09_newest_checkpoint.py')!r}\n" + GUESSED_FACTS
    )
    process = run_python(service, "-c", script)
    assert process.returncode == 0, process.stderr[-4000:]
    out = process.stdout
    assert "sampler before training is the base model True" in out
    assert "load_state after it: validation.already_initialized" in out
    assert "sample_exactly gave 12" in out
    assert "last_request_time moved at start True then stayed True" in out
    assert "unknown key: EventFailedError invalid_loss_config" in out
    assert "trains after it ['loss_mean', 'loss_sum', 'token_count']" in out
    listed = re.findall(r"^listed (\w+) (\S+) (\S+) (\w+)$", out, re.M)
    assert ("sampler", "temp-sampling-", "21600.0", "True") in listed
    assert ("sampler", "facts-named", "None", "False") in listed
    assert ("training", "facts-step-000", "None", "False") in listed
    assert "resumed at step 7 TrainingClient True" in out
    # d(S^2)/dlogp = 2S, so the surrogate -sum(-2S * logp) is 2 S^2: twice the loss returned
    assert "custom metrics ['loss_mean', 'loss_sum', 'mine', 'token_count'] 2.0" in out
    assert "model_id Qwen/Qwen3-4B-Instruct-2507 run id listed True" in out
    assert "list_checkpoints(model_id): control.request_failed 404" in out
    assert set(re.search(r"^stop reasons \[(.*)\]$", out, re.M).group(1).split(", ")) <= {
        "'stop'",
        "'length'",
    }
    # 5: the run's last_request_time moves once more when it ends (the process closed its session)
    run_id, last = re.search(r"^run (\S+) last (\S+)$", out, re.M).groups()
    rest = sdk_in_this_process.ServiceClient().create_rest_client()
    after = rest.get_training_run(run_id).result().last_request_time
    assert after > datetime.fromisoformat(last)


SKILL_IV_FACTS = """
import subprocess, sys
import pytrio as trio

namespace = {}
exec(RETRY, namespace)
exec(NEWEST, namespace)
with_retries, newest_named = namespace["with_retries"], namespace["newest_named"]
trio.configure(actor_capacity_wait_timeout_seconds=0.5)  # a full service answers 429 at once
service = trio.ServiceClient()
rest = service.create_rest_client()
training = service.create_lora_training_client(base_model="Qwen/Qwen3-4B-Instruct-2507", rank=4)
run_id = training.training_run_cuid
datum = trio.Datum(
    model_input=trio.ModelInput.from_ints([9707, 1879, 11]),
    loss_fn_inputs={"target_tokens": [1879, 11, 1879]},
)
adam = trio.AdamParams(learning_rate=1e-3)
attempts = []


def counted(call):
    def wrapped():
        attempts.append(1)
        return call()

    return wrapped


# the retry helper: a value comes back; errors that cannot heal are raised at the first attempt
value = with_retries(counted(lambda: training.forward([datum], "cross_entropy").result()))
print("retry value", sorted(value.metrics), "attempts", len(attempts))

# what a state holds: the optimizer's count after N steps; names at the end of the path
for _ in range(3):
    training.forward_backward([datum], "cross_entropy").result()
    print("optim step", training.optim_step(adam).result().metrics["step"])
state = training.save_state("ckpt-000003").result()
training.forward_backward([datum], "cross_entropy").result()
training.optim_step(adam).result()
newest = training.save_state("ckpt-000004").result()
training.save_state("other-000009").result()  # newer, but not a ckpt-*
found_run, found = newest_named(rest, [run_id])
print("newest ckpt", found.path == newest.path, found_run == run_id, found.path.rsplit("/", 1)[-1])
ids = [c.checkpoint_id for c in rest.list_checkpoints(run_id).result().checkpoints]
named = any(i.startswith("ckpt-") for i in ids)
print("ids start with ckpt-", named, "ids", sorted({i[:3] for i in ids}))

attempts.clear()
try:
    with_retries(counted(lambda: training.save_state("ckpt-000004").result()), first_delay_s=0)
except trio.PyTrioError as err:
    print("duplicate", type(err).__name__, err.code, err.retryable, "attempts", len(attempts))
attempts.clear()
try:
    archive = counted(lambda: rest.get_checkpoint_archive_url(state.path).result())
    with_retries(archive, first_delay_s=0)
except trio.PyTrioError as err:
    print("path as id", err.code, err.status_code, err.retryable, "attempts", len(attempts))

# a retryable error that heals: another process holds every training slot, then exits
HOLDER = '''
import time, pytrio as trio
trio.configure(actor_capacity_wait_timeout_seconds=0.5)
service, held = trio.ServiceClient(), []
try:
    while len(held) < 64:
        held.append(service.create_lora_training_client(base_model=MODEL, rank=4))
except trio.PyTrioError as err:
    print("HELD", err.code, err.retryable, flush=True)
time.sleep(1.5)
'''
holder = subprocess.Popen(
    [sys.executable, "-c", f"MODEL = {training.model_id!r}\\n" + HOLDER],
    stdout=subprocess.PIPE, text=True,
)
held = next(line for line in holder.stdout if line.startswith("HELD"))  # the SDK prints too
print("holder", held.strip())
attempts.clear()
create = counted(lambda: service.create_lora_training_client(base_model=training.model_id, rank=4))
with_retries(create, first_delay_s=1.0, attempts=6)
print("created after", len(attempts) > 1, "holder exited", holder.wait(timeout=60) == 0)

# where a resumed client's count starts
resumed = service.create_training_client_from_state_with_optimizer(state.path)
resumed.forward_backward([datum], "cross_entropy").result()
print("resumed with optimizer, first step", resumed.optim_step(adam).result().metrics["step"])
fresh = service.create_training_client_from_state(state.path)
fresh.forward_backward([datum], "cross_entropy").result()
print("weights only, first step", fresh.optim_step(adam).result().metrics["step"])


# custom-loss metrics: the surrogate call's three, then yours, which win on a clash
def nll(data, logprobs):
    loss = -sum(lp.sum() for lp in logprobs)
    return loss, {"loss_sum": -1.0, "nll": loss.item()}


metrics = training.forward_backward_custom([datum], nll).result().metrics
same = abs(metrics["loss_mean"] * 3 - metrics["nll"]) < 1e-3  # the surrogate's mean: nll / 3
print("custom", sorted(metrics), metrics["loss_sum"], same)
"""


def test_skill_iv_facts_hold_under_trio_local(service) -> None:
    retry = _python_block("references/debugging.md", "def with_retries")
    newest = _python_block("references/rest-client.md", "def newest_named")
    script = f"RETRY = {retry!r}\nNEWEST = {newest!r}\n" + SKILL_IV_FACTS
    process = run_python(service, "-c", script)
    assert process.returncode == 0, process.stderr[-4000:]
    out = process.stdout
    assert "retry value ['loss_mean', 'loss_sum', 'token_count'] attempts 1" in out
    assert re.findall(r"^optim step ([\d.]+)$", out, re.M) == ["1.0", "2.0", "3.0"]
    assert "newest ckpt True True ckpt-000004" in out
    assert "ids start with ckpt- False ids ['ck_']" in out
    assert "duplicate EventFailedError checkpoint_exists False attempts 1" in out
    # pytrio marks control.request_failed retryable even for a 404: the helper does not retry it
    assert "path as id control.request_failed 404 True attempts 1" in out
    assert "holder HELD actor_capacity_exceeded True" in out  # the 429 the SDK marks retryable
    assert "created after True holder exited True" in out
    assert "retryable actor_capacity_exceeded (attempt 1); retrying in 1 s" in out
    assert "resumed with optimizer, first step 4.0" in out
    assert "weights only, first step 1.0" in out
    custom = re.search(r"^custom (\[.*\]) (\S+) (\w+)$", out, re.M).groups()
    assert custom == ("['loss_mean', 'loss_sum', 'nll', 'token_count']", "-1.0", "True")
