"""Sampling and compute_logprobs through the real SDK, from the base model and checkpoints."""

from __future__ import annotations

import math

import numpy as np
import pytest
import pytrio as trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.local import MODEL, prompt_tokens, sft_batch, train

REAL_VOCAB = 151_669  # the tokenizer's ids; the embedding has 151,936 rows


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


def test_sampled_logprobs_are_compute_logprobs_of_the_same_sequence(trained) -> None:
    """Once +0.00175 nats per token off: the sampler normalised over the tokenizer's 151,669
    ids, the trainer and compute_logprobs over the 151,936 embedding rows."""
    _, tokenizer, sampler, _ = trained
    tokens = prompt_tokens(tokenizer, "Tell me a story")
    params = trio.SamplingParams(max_tokens=8, temperature=1.0, seed=5)
    result = sampler.sample(prompt=trio.ModelInput.from_ints(tokens), sampling_params=params)
    for sequence in result.result().sequences:
        whole = sampler.compute_logprobs(trio.ModelInput.from_ints(tokens + sequence.tokens))
        scored = whole.result()[len(tokens) :]
        np.testing.assert_allclose(sequence.logprobs, scored, rtol=0, atol=2e-4)
        bias = float(np.mean(np.asarray(sequence.logprobs) - np.asarray(scored)))
        assert abs(bias) < 2e-4, bias


def test_a_one_token_prompt_has_prompt_logprobs_none(trained) -> None:
    """Once internal_error (an empty concatenation) with topk_prompt_logprobs."""
    _, _, sampler, _ = trained
    result = sampler.sample(
        prompt=trio.ModelInput.from_ints([9707]),
        sampling_params=trio.SamplingParams(max_tokens=1),
        include_prompt_logprobs=True,
        topk_prompt_logprobs=3,
    ).result()
    assert result.prompt_logprobs == [None] and result.topk_prompt_logprobs == [None]
    assert sampler.compute_logprobs(trio.ModelInput.from_ints([9707])).result() == [None]


@pytest.fixture(scope="module")
def base_sampler(client):
    """The untrained base model: nearly uniform, so any two draws of 4 tokens differ."""
    return client.create_sampling_client(base_model=MODEL)


def _tokens(sampler, prompt: list[int], **params) -> list[int]:
    params.setdefault("max_tokens", 4)
    sampling = trio.SamplingParams(**params)
    result = sampler.sample(prompt=trio.ModelInput.from_ints(prompt), sampling_params=sampling)
    return result.result().sequences[0].tokens


def test_seeds_use_all_64_bits(base_sampler) -> None:
    """Once seeds that differed only above bit 32 gave identical samples."""
    for pair in ((1, 2**32 + 1), (0, -(2**63))):
        first, second = (_tokens(base_sampler, [9707, 1879], seed=seed) for seed in pair)
        assert first != second, pair


def test_temperatures_and_top_p_past_float32_behave_as_their_limits(base_sampler) -> None:
    """Once 1e-40, 1e300 and top_p 1e-300 drew a padding id and failed with internal_error."""
    prompt = [9707, 1879, 11]
    greedy = _tokens(base_sampler, prompt, temperature=0.0)
    assert _tokens(base_sampler, prompt, temperature=1e-40, seed=1) == greedy
    assert _tokens(base_sampler, prompt, temperature=1.0, top_p=1e-300, seed=1) == greedy
    hot = _tokens(base_sampler, prompt, temperature=1e300, seed=1)
    assert len(hot) == 4 and all(token < REAL_VOCAB for token in hot)


EDGE_TEMPERATURES = st.one_of(
    st.sampled_from([0.0, 5e-324, 1e-40, 1e-6, 1.0, 3.5e38, 1e300]),
    st.floats(0.0, 1e308, allow_nan=False),
)


@settings(
    max_examples=10,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    temperature=EDGE_TEMPERATURES,
    top_p=st.one_of(st.sampled_from([5e-324, 1e-300, 1.0]), st.floats(5e-324, 1.0)),
    seed=st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)),
    prompt=st.lists(st.integers(0, REAL_VOCAB - 1), min_size=1, max_size=6),
    topk=st.integers(0, 3),
)
def test_sampling_at_the_edges_answers_real_ids(
    base_sampler, temperature, top_p, seed, prompt, topk
) -> None:
    params = trio.SamplingParams(max_tokens=3, temperature=temperature, top_p=top_p, seed=seed)
    result = base_sampler.sample(
        prompt=trio.ModelInput.from_ints(prompt),
        sampling_params=params,
        num_samples=2,
        include_prompt_logprobs=True,
        topk_prompt_logprobs=topk,
    ).result()
    assert result.prompt_logprobs[0] is None and len(result.prompt_logprobs) == len(prompt)
    assert all(math.isfinite(lp) and lp <= 0 for lp in result.prompt_logprobs[1:])
    if topk:
        assert result.topk_prompt_logprobs[0] is None
        assert all(len(top) == topk for top in result.topk_prompt_logprobs[1:])
    for sequence in result.sequences:
        assert 1 <= len(sequence.tokens) <= 3
        assert all(0 <= token < REAL_VOCAB for token in sequence.tokens)
        assert all(math.isfinite(lp) and lp <= 0 for lp in sequence.logprobs)
