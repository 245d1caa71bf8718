"""The datum builder (train_sft) and the datum checks (train_step)."""

from __future__ import annotations

import math

import pytest
from mcp import Client

from mcp_server.datums import (
    REQUIRED_INPUTS,
    build_sft_example,
    check_datum,
    sample_prompt_tokens,
    split_chat,
)
from mcp_server.errors import InvalidInput
from mcp_server.tools.train_sft import diverged, plan_batches


def test_loss_table_matches_the_installed_sdk() -> None:
    from pytrio.client.training_batch import LOSS_INPUT_SCHEMAS

    assert dict(LOSS_INPUT_SCHEMAS) == REQUIRED_INPUTS


def test_prompt_completion_gets_weights_eos_and_the_shift(tokenizer) -> None:
    example = build_sft_example(tokenizer, "what is the answer?", " 42", 0, chat=False)
    prompt = tokenizer.encode("what is the answer?", add_special_tokens=False)
    completion = [*tokenizer.encode(" 42", add_special_tokens=False), tokenizer.eos_token_id]
    tokens = prompt + completion
    assert example.input_tokens == tokens[:-1]
    assert example.target_tokens == tokens[1:]
    # Position t predicts tokens[t + 1]: weight 1 exactly where the target is a completion token.
    assert example.weights == [0.0] * (len(prompt) - 1) + [1.0] * len(completion)
    assert example.target_tokens[-1] == tokenizer.eos_token_id
    assert example.trained_tokens == len(completion)


def test_completion_that_already_ends_with_eos_gets_no_second_one(tokenizer) -> None:
    example = build_sft_example(tokenizer, "hello", " world<|im_end|>", 0, chat=False)
    assert example.target_tokens.count(tokenizer.eos_token_id) == 1


def test_chat_trains_only_the_last_assistant_turn(tokenizer) -> None:
    messages = [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "world"},
        {"role": "user", "content": "what is the answer?"},
        {"role": "assistant", "content": "42"},
    ]
    prompt, completion = split_chat(tokenizer, messages, 0)
    assert prompt.endswith("<|im_start|>assistant\n")
    assert completion == "42<|im_end|>"
    example = build_sft_example(tokenizer, prompt, completion, 0, chat=True)
    trained = [t for t, w in zip(example.target_tokens, example.weights, strict=True) if w]
    assert trained == tokenizer.encode("42<|im_end|>", add_special_tokens=False)
    # Sampling with the same messages (minus the answer) reproduces the training prompt.
    assert sample_prompt_tokens(tokenizer, None, messages[:-1]) == tokenizer.encode(
        prompt, add_special_tokens=False
    )


def test_chat_must_end_with_the_assistant(tokenizer) -> None:
    with pytest.raises(InvalidInput, match=r"examples\[3\].messages must end with an assistant"):
        split_chat(tokenizer, [{"role": "user", "content": "hello"}], 3)


def test_empty_completion_is_refused(tokenizer) -> None:
    with pytest.raises(InvalidInput, match="completion is empty"):
        build_sft_example(tokenizer, "hello", "", 2, chat=False)


CE = "cross_entropy"


@pytest.mark.parametrize(
    ("model_input", "inputs", "loss", "message"),
    [
        ([], {"target_tokens": []}, CE, "model_input is empty"),
        ([1, 2], {"target_tokens": [2]}, CE, "has 1 values but model_input has 2 tokens"),
        ([1, 2, 3], {"target_tokens": [1, 2, 3]}, CE, "trio-lint PTR305 unshifted-targets"),
        ([1, 2], {"target_tokens": [2, 3], "weights": [1, math.nan]}, CE, "weights[1] is nan"),
        ([1, 2], {"target_tokens": [2, 3], "labels": [2, 3]}, CE, "unknown keys ['labels']"),
        ([1, 2], {"weights": [1, 1]}, CE, "lacks target_tokens"),
        ([1, 2], {"target_tokens": [2, 3]}, "ppo", "lacks logprobs, advantages"),
        (
            [1, 2],
            {"target_tokens": [2, 3], "logprobs": [-1, -1], "advantages": [1, math.inf]},
            "importance_sampling",
            "advantages[1] is inf",
        ),
        ([1, 2], {"target_tokens": [2, -5]}, CE, "negative id other than -100"),
        ([1, -100], {"target_tokens": [2, 3]}, CE, "trio-lint PTR301 minus-100-mask"),
        ([1, 2], {"labels": [2, 3]}, CE, "trio-lint PTR302 hf-label-keys"),
        (
            [1, 2],
            {
                "target_tokens": [2, 3],
                "logprobs": [-1, -1],
                "advantages": [1, 1],
                "weights": [1, 1],
            },
            "ppo",
            "trio-lint PTR304 policy-loss-weights",
        ),
        ([1, 2], {"target_tokens": [2.5, 3]}, CE, "must be integer token ids"),
        ([1, 2], {"target_tokens": [2, 3], "weights": [1, -1]}, CE, "negative weight"),
    ],
)
def test_bad_datums_are_explained(model_input, inputs, loss, message) -> None:
    with pytest.raises(InvalidInput, match=None) as caught:
        check_datum(0, model_input, inputs, loss)
    assert message in str(caught.value)
    assert str(caught.value).startswith("datums[0]")


def test_good_datums_count_weighted_targets() -> None:
    assert check_datum(0, [1, 2, 3], {"target_tokens": [2, 3, 4], "weights": [0, 1, 1]}, CE) == 2
    assert check_datum(0, [1, 2], {"target_tokens": [-100, 3]}, CE) == 1
    rl = {"target_tokens": [2, 3], "logprobs": [-0.5, -1.0], "advantages": [0.0, 1.0]}
    assert check_datum(0, [1, 2], rl, "dro") == 2


@pytest.mark.anyio
async def test_train_step_refuses_bad_data_before_sending(make_server) -> None:
    datum = {"model_input": [1, 2, 3], "loss_fn_inputs": {"target_tokens": [1, 2, 3]}}
    zero = {"model_input": [1, 2], "loss_fn_inputs": {"target_tokens": [2, 3], "weights": [0, 0]}}
    async with Client(make_server()) as client:
        unshifted = await client.call_tool("train_step", {"run_id": "r", "datums": [datum]})
        unweighted = await client.call_tool("train_step", {"run_id": "r", "datums": [zero]})
        bad_loss = await client.call_tool(
            "train_step", {"run_id": "r", "datums": [zero], "loss_fn": "mse"}
        )
    assert unshifted.is_error and "Shift by one token" in unshifted.content[0].text
    assert unweighted.is_error and "no target position carries weight" in unweighted.content[0].text
    assert bad_loss.is_error and "loss_fn" in bad_loss.content[0].text


def test_batches_wrap_around_the_examples() -> None:
    assert plan_batches(3, 2, 3) == [[0, 1], [2, 0], [1, 2]]


def test_divergence_and_nan_stop_training() -> None:
    assert diverged([2.0, 1.0], 4.0) is None
    assert diverged([2.0, math.nan], 4.0) == "the loss of step 2 is nan"
    assert "step 3, 9, is above 4x the first step's 2" in diverged([2.0, 3.0, 9.0], 4.0)
