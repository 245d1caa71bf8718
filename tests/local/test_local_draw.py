"""The sampler's draw of the next token: the distribution it is given, never an id of zero
probability, one id per row."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from trio_local.engine.sampling import draw, invert_cdf


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
