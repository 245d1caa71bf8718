"""Sampling and compute_logprobs through the real SDK, from the base model and checkpoints."""

from __future__ import annotations

import numpy as np
import pytest
import pytrio as trio
from local_helpers import MODEL, prompt_tokens, sft_batch, train


@pytest.fixture(scope="module")
def trained(client):
    """A run trained a few steps, its tokenizer and a sampler on its saved weights."""
    training = client.create_lora_training_client(base_model=MODEL, rank=8, seed=3)
    tokenizer = training.get_tokenizer()
    train(training, sft_batch(tokenizer), steps=3)
    saved = training.save_weights_for_sampler("sampling-test").result()
    sampler = client.create_sampling_client(base_model=MODEL, model_path=saved.path)
    return training, tokenizer, sampler, saved


def prompt(tokenizer) -> trio.ModelInput:
    return trio.ModelInput.from_ints(prompt_tokens(tokenizer, "Tell me a story"))


def test_save_weights_for_sampler_returns_a_checkpoint_uri(trained) -> None:
    _, _, _, saved = trained
    assert saved.path.endswith("/sampler_weights/sampling-test")
    assert saved.model == MODEL
    assert saved.size > 0


def test_same_seed_same_output_and_num_samples(trained) -> None:
    _, tokenizer, sampler, _ = trained
    params = trio.SamplingParams(max_tokens=8, temperature=1.0, seed=1234)
    first = sampler.sample(prompt=prompt(tokenizer), num_samples=3, sampling_params=params)
    second = sampler.sample(prompt=prompt(tokenizer), num_samples=3, sampling_params=params)
    a, b = first.result(), second.result()
    assert len(a.sequences) == 3
    assert [s.tokens for s in a.sequences] == [s.tokens for s in b.sequences]
    other = trio.SamplingParams(max_tokens=8, temperature=1.0, seed=99)
    c = sampler.sample(prompt=prompt(tokenizer), num_samples=3, sampling_params=other).result()
    assert [s.tokens for s in c.sequences] != [s.tokens for s in a.sequences]
    for sequence in a.sequences:
        assert len(sequence.logprobs) == len(sequence.tokens) <= 8
        assert all(lp <= 0 for lp in sequence.logprobs)
        assert sequence.text == tokenizer.decode(sequence.tokens, skip_special_tokens=True)


def test_max_tokens_then_stop_token_ids_and_stop_strings(client, trained) -> None:
    _, tokenizer, _, _ = trained
    # The untrained base model: its greedy path does not end within six tokens, where the
    # trained run may already answer <|im_end|>.
    sampler = client.create_sampling_client(base_model=MODEL)
    base = (
        sampler.sample(
            prompt=prompt(tokenizer),
            sampling_params=trio.SamplingParams(max_tokens=6, temperature=0.0, stop=[151645]),
        )
        .result()
        .sequences[0]
    )
    assert len(base.tokens) <= 6
    if len(base.tokens) == 6:
        assert base.stop_reason == "length"
    # stop at the greedy path's third token, by id and by its text
    stop_id = base.tokens[2]
    by_id = (
        sampler.sample(
            prompt=prompt(tokenizer),
            sampling_params=trio.SamplingParams(max_tokens=6, temperature=0.0, stop=[stop_id]),
        )
        .result()
        .sequences[0]
    )
    assert by_id.tokens == base.tokens[: base.tokens.index(stop_id) + 1]
    assert by_id.stop_reason == "stop"
    stop_text = tokenizer.decode(base.tokens[:3])[-2:]
    by_text = (
        sampler.sample(
            prompt=prompt(tokenizer),
            sampling_params=trio.SamplingParams(max_tokens=6, temperature=0.0, stop=stop_text),
        )
        .result()
        .sequences[0]
    )
    assert stop_text in tokenizer.decode(by_text.tokens)
    assert len(by_text.tokens) <= 3


def test_top_k_one_is_greedy(trained) -> None:
    _, tokenizer, sampler, _ = trained
    greedy = sampler.sample(
        prompt=prompt(tokenizer), sampling_params=trio.SamplingParams(max_tokens=5, temperature=0)
    ).result()
    top1 = sampler.sample(
        prompt=prompt(tokenizer),
        sampling_params=trio.SamplingParams(max_tokens=5, temperature=1.5, top_k=1, top_p=0.5),
    ).result()
    assert top1.sequences[0].tokens == greedy.sequences[0].tokens


def test_compute_logprobs_matches_the_trainers_forward_logprobs(trained) -> None:
    training, tokenizer, sampler, _ = trained
    tokens = prompt_tokens(tokenizer, "Say hi") + tokenizer.encode("Hello there!")
    from_sampler = sampler.compute_logprobs(trio.ModelInput.from_ints(tokens)).result()
    assert from_sampler[0] is None and len(from_sampler) == len(tokens)
    datum = trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": tokens[1:]},
    )
    out = training.forward([datum], "cross_entropy").result()
    from_trainer = out.loss_fn_outputs[0]["logprobs"].to_numpy()
    np.testing.assert_allclose(from_sampler[1:], from_trainer, rtol=1e-4, atol=1e-4)


def test_prompt_logprobs_and_top_k_prompt_logprobs(trained) -> None:
    _, tokenizer, sampler, _ = trained
    result = sampler.sample(
        prompt=prompt(tokenizer),
        sampling_params=trio.SamplingParams(max_tokens=1),
        include_prompt_logprobs=True,
        topk_prompt_logprobs=2,
    ).result()
    length = len(prompt_tokens(tokenizer, "Tell me a story"))
    assert len(result.prompt_logprobs) == length and result.prompt_logprobs[0] is None
    assert len(result.topk_prompt_logprobs) == length
    top = result.topk_prompt_logprobs[1]
    assert len(top) == 2 and top[0][1] >= top[1][1]
    # the best candidate is at least as likely as the prompt's actual token
    assert top[0][1] >= result.prompt_logprobs[1] - 1e-5


def test_base_model_sampler_differs_from_the_trained_one(client, trained) -> None:
    _, tokenizer, sampler, _ = trained
    base = client.create_sampling_client(base_model=MODEL)
    tokens = prompt_tokens(tokenizer, "Say hi") + tokenizer.encode("Hello there!")
    model_input = trio.ModelInput.from_ints(tokens)
    base_lp = base.compute_logprobs(model_input).result()
    trained_lp = sampler.compute_logprobs(model_input).result()
    assert base_lp[1:] != trained_lp[1:]
    # base logprobs are those of a random model over 151,936 tokens: about -ln(V) each
    assert np.mean(base_lp[1:]) < -10
