"""Supervised fine-tuning through the real SDK: what a step computes and reports.

That the loss falls and greedy decoding then reproduces the trained completions is shown by
examples/01_train_sft.py under `trio-local run` (tests/skill/test_examples.py: 30 steps, the loss
cut tenfold, every trained completion sampled back), which this module used to repeat in-process
at 20 CPU-seconds."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import numpy as np
import pytest
import pytrio as trio

import trio_local
from tests.support.local import MODEL, sft_datum
from trio_local import catalogue


@pytest.fixture()
def small_client(service: trio_local.LocalService) -> Iterator[trio.ServiceClient]:
    """A client of a second service whose trainer takes 1024 tokens per event."""
    with trio_local.serve_in_background(train_max_seq_len=1024):
        yield trio.ServiceClient()
    service.configure_sdk()


def test_catalogue_lists_real_ids_and_says_they_are_stand_ins(service, client) -> None:
    models = client.get_supported_models()
    assert MODEL in models
    assert all(name.startswith("Qwen/Qwen3") for name in models)
    capabilities = client.get_server_capabilities().supported_models
    stand_in = next(m for m in capabilities if m.model_name == MODEL)
    assert stand_in.training.available and stand_in.sampling.available
    limits = catalogue.TRAINER_LIMITS
    assert stand_in.training.max_tokens_per_request == limits.max_tokens_per_request >= 8192
    listing = httpx.get(
        f"{service.base_url}/api/models", headers={"X-API-Key": service.api_key}
    ).json()
    for item in listing["items"]:
        assert "stand-in" in item["description"] and "not the real model" in item["description"]


def test_tokenizer_is_the_real_qwen_vocabulary_with_the_instruct_chat_format(client) -> None:
    tokenizer = client.create_lora_training_client(base_model=MODEL, rank=8).get_tokenizer()
    assert len(tokenizer) == 151_669
    assert tokenizer.encode("Hello world") == [9707, 1879]
    text = tokenizer.apply_chat_template(
        [{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True
    )
    assert text == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"


def test_forward_reports_per_token_logprobs_that_match_the_loss(client) -> None:
    training = client.create_lora_training_client(base_model=MODEL, rank=8, seed=1)
    tokenizer = training.get_tokenizer()
    datum = sft_datum(tokenizer, "Say hi", "Hello there!")
    out = training.forward([datum], "cross_entropy").result()
    logprobs = out.loss_fn_outputs[0]["logprobs"].to_numpy()
    elementwise = out.loss_fn_outputs[0]["elementwise_loss"].to_numpy()
    weights = np.array(datum.loss_fn_inputs["weights"].data)
    assert logprobs.shape == weights.shape
    assert np.all(logprobs <= 0)
    np.testing.assert_allclose(elementwise, -logprobs * weights, rtol=1e-5, atol=1e-5)
    assert out.metrics["token_count"] == int((weights != 0).sum())
    np.testing.assert_allclose(out.metrics["loss_sum"], elementwise.sum(), rtol=1e-5)
    # forward computes no gradient: an optimizer step after it leaves the loss unchanged
    training.optim_step(trio.AdamParams(learning_rate=1e-2)).result()
    again = training.forward([datum], "cross_entropy").result()
    assert again.metrics["loss_sum"] == out.metrics["loss_sum"]


def test_target_minus_100_is_ignored(client) -> None:
    training = client.create_lora_training_client(base_model=MODEL, rank=8, seed=2)
    tokens = [9707, 1879, 11, 1879, 0]
    datum = trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": [1879, -100, 1879, -100]},
    )
    out = training.forward([datum], "cross_entropy").result()
    logprobs = out.loss_fn_outputs[0]["logprobs"].to_numpy()
    assert out.metrics["token_count"] == 2
    assert logprobs[1] == 0 and logprobs[3] == 0
    assert logprobs[0] < 0 and logprobs[2] < 0


def test_a_batch_the_sdk_splits_trains_like_the_same_batch_in_one_event(small_client) -> None:
    """Over max_tokens_per_request (here 1024) the SDK sends two events with the batch's totals.

    Run A sends one 1200-token batch (split in two events, normalised by the whole batch's
    active tokens); run B, with the same seed, sends the halves as two forward_backward calls,
    each normalised by its own (equal) active-token count, i.e. exactly twice A's gradient.
    Adam's first step is invariant to the gradient's scale, so both runs must land on the
    same weights.
    """
    long_prompt = list(range(1000, 1000 + 299))
    # The SDK splits by input length (299 positions a datum); only the last 50 positions of
    # each have targets (a -100 prompt, as in SFT), which keeps the unembedding of the 151,936
    # vocabulary to 200 rows a pass while the split and its normalisation are the same.
    scored = 50

    def datum(offset: int) -> trio.Datum:
        tokens = [t + offset for t in long_prompt] + [42]
        targets = [-100] * (len(tokens) - 1 - scored) + tokens[-scored:]
        return trio.Datum(
            model_input=trio.ModelInput.from_ints(tokens[:-1]),
            loss_fn_inputs={"target_tokens": targets},
        )

    batch = [datum(i * 500) for i in range(4)]
    run_a = small_client.create_lora_training_client(base_model=MODEL, rank=4, seed=7)
    run_b = small_client.create_lora_training_client(base_model=MODEL, rank=4, seed=7)
    whole = run_a.forward_backward(batch, "cross_entropy").result()
    assert whole.metrics["token_count"] == 4 * scored
    halves = [
        run_b.forward_backward(batch[:2], "cross_entropy").result(),
        run_b.forward_backward(batch[2:], "cross_entropy").result(),
    ]
    np.testing.assert_allclose(
        sum(h.metrics["loss_sum"] for h in halves), whole.metrics["loss_sum"], rtol=1e-5
    )
    for run in (run_a, run_b):
        run.optim_step(trio.AdamParams(learning_rate=1e-3)).result()
    after_a = run_a.forward(batch[:1], "cross_entropy").result().metrics["loss_sum"]
    after_b = run_b.forward(batch[:1], "cross_entropy").result().metrics["loss_sum"]
    before = whole.loss_fn_outputs[0]["elementwise_loss"].to_numpy().sum()
    assert after_a < before
    np.testing.assert_allclose(after_a, after_b, rtol=1e-4)


def test_optim_step_reports_the_gradient_norm(client) -> None:
    training = client.create_lora_training_client(base_model=MODEL, rank=4, seed=4)
    datum = sft_datum(training.get_tokenizer(), "Say hi", "Hello there!")
    idle = training.optim_step(trio.AdamParams(learning_rate=1e-3)).result()
    assert idle.metrics["grad_norm"] == 0
    training.forward_backward([datum], "cross_entropy").result()
    step = training.optim_step(
        trio.AdamParams(learning_rate=1e-3, weight_decay=0.01, grad_clip_norm=1.0)
    ).result()
    assert step.metrics["grad_norm"] > 0
    assert step.metrics["learning_rate"] == 1e-3
