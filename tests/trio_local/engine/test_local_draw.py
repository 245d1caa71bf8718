"""The sampler's draw of the next token: the distribution it is given, never an id of zero
probability, one id per row; at any temperature, top_p and seed the SDK can send."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from trio_local.engine.sampling import SamplingOptions, _choose, draw, invert_cdf, seeded_generator


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 6),
    st.integers(1, 300),
    st.floats(0.0, 0.999),
    st.integers(0, 2**32 - 1),
)
def test_a_draw_never_lands_on_an_id_of_zero_probability(rows, vocabulary, masked, seed) -> None:
    generator = torch.Generator().manual_seed(seed)
    logits = torch.randn(rows, vocabulary, generator=generator) * 5
    cut = torch.rand(rows, vocabulary, generator=generator) < masked
    cut[:, torch.randint(vocabulary, (1,), generator=generator)] = False  # one id always left
    probs = logits.masked_fill(cut, float("-inf")).softmax(dim=-1)
    chosen = draw(probs, generator)
    assert chosen.shape == (rows,)
    assert (probs.gather(1, chosen[:, None]) > 0).all()


def test_a_uniform_of_exactly_zero_or_nearly_one_stays_on_allowed_ids() -> None:
    probs = torch.tensor([[0.0, 0.0, 0.5, 0.0, 0.5, 0.0]] * 3)
    uniforms = torch.tensor([[0.0], [0.5], [1.0 - 2**-53]], dtype=torch.float64)
    assert invert_cdf(probs, uniforms).tolist() == [2, 4, 4]


def test_draws_follow_the_distribution() -> None:
    """20,000 draws from a 6-id distribution: every frequency within 4 standard errors."""
    probs = torch.tensor([0.5, 0.2, 0.15, 0.1, 0.05, 0.0])
    generator = torch.Generator().manual_seed(7)
    chosen = draw(probs.expand(20_000, -1).contiguous(), generator)
    counts = torch.bincount(chosen, minlength=6).double() / 20_000
    error = (probs.double() * (1 - probs.double()) / 20_000).sqrt()
    assert ((counts - probs.double()).abs() <= 4 * error + 1e-12).all(), counts


def test_the_same_seed_draws_the_same_ids() -> None:
    probs = torch.randn(4, 1000, generator=torch.Generator().manual_seed(1)).softmax(-1)
    first = draw(probs, torch.Generator().manual_seed(3))
    assert torch.equal(first, draw(probs, torch.Generator().manual_seed(3)))


# Every float a temperature or top_p can be, weighted to the edges of float32 and float64.
TEMPERATURES = st.one_of(
    st.sampled_from([0.0, 5e-324, 1e-300, 1e-45, 1e-40, 1e-38, 1e-6, 1.0, 3.4e38, 1e39, 1e300]),
    st.floats(0.0, 1.7e308, allow_nan=False),
)
TOP_PS = st.one_of(
    st.sampled_from([5e-324, 1e-300, 1e-46, 1e-8, 0.5, 1.0 - 1e-12, 1.0]),
    st.floats(5e-324, 1.0, exclude_min=False),
)


@settings(max_examples=60, deadline=None)
@given(
    temperature=TEMPERATURES,
    top_p=TOP_PS,
    top_k=st.sampled_from([-1, 1, 3, 1000]),
    seed=st.integers(0, 2**32 - 1),
)
def test_any_temperature_and_top_p_choose_a_real_id(temperature, top_p, top_k, seed) -> None:
    """Once 1e-40, 1e300 and top_p 1e-300 drew a padding id (NaN probabilities)."""
    generator = torch.Generator().manual_seed(seed)
    logits = torch.randn(3, 64, generator=generator) * 8
    logits[:, 50:] = float("-inf")  # the padding rows past the tokenizer
    options = SamplingOptions(max_tokens=1, temperature=temperature, top_k=top_k, top_p=top_p)
    chosen = _choose(logits.clone(), options, generator)
    assert chosen.shape == (3,) and bool((chosen < 50).all()), (temperature, top_p, chosen)
    greedy = logits.argmax(dim=-1)
    # Their limits: the most likely id (a top_p of ~0 keeps one id, unless a temperature near
    # float32's largest number made every real id equally likely).
    tiny_top_p = top_p < 1e-45 and temperature < 1e30
    if temperature < torch.finfo(torch.float32).tiny or tiny_top_p or top_k == 1:
        assert torch.equal(chosen, greedy)


def test_a_temperature_past_float32_draws_uniformly_over_the_real_ids() -> None:
    logits = torch.randn(1, 8) * 8
    logits[:, 6:] = float("-inf")
    options = SamplingOptions(max_tokens=1, temperature=1e300)
    generator = torch.Generator().manual_seed(0)
    drawn = torch.stack([_choose(logits, options, generator) for _ in range(600)])
    counts = torch.bincount(drawn.reshape(-1), minlength=8)
    assert counts[6:].sum() == 0 and bool((counts[:6] > 60).all()), counts


@given(seed=st.integers(-(2**63), 2**63 - 1), bit=st.integers(32, 63))
@settings(max_examples=100, deadline=None)
def test_seeds_that_differ_above_bit_32_draw_differently(seed, bit) -> None:
    """Once 1 and 2**32 + 1, or 0 and -2**63, drew the same samples."""
    other = seed ^ (1 << bit)
    other = other - 2**64 if other >= 2**63 else other  # still a signed 64-bit seed
    first = torch.rand(4, generator=seeded_generator(seed))
    second = torch.rand(4, generator=seeded_generator(other))
    assert not torch.equal(first, second), (seed, other)
    assert torch.equal(first, torch.rand(4, generator=seeded_generator(seed)))


def test_seeds_below_2_to_the_32_draw_what_they_always_drew() -> None:
    for seed in (0, 1, 1234, 2**32 - 1):
        expected = torch.rand(4, generator=torch.Generator().manual_seed(seed))
        assert torch.equal(torch.rand(4, generator=seeded_generator(seed)), expected)
