"""The trainer's AdamW against torch.optim.AdamW: the same steps bit for bit, and optimizer state
that moves between the two (checkpoints written before and after trio-local had its own)."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from trio_local.engine.optimizer import AdamW

HYPER = st.fixed_dictionaries(
    {
        "lr": st.floats(1e-6, 1e-1),
        "betas": st.tuples(st.floats(0.0, 0.99), st.floats(0.5, 0.9999)),
        "eps": st.floats(1e-12, 1e-6),
        "weight_decay": st.floats(0.0, 0.1),
    }
)


def _params(seed: int) -> list[torch.nn.Parameter]:
    generator = torch.Generator().manual_seed(seed)
    shapes = [(4, 3), (7,), (2, 5)]
    return [torch.nn.Parameter(torch.randn(shape, generator=generator)) for shape in shapes]


def _step(optimizer, params, hyper, seed: int, skip: int | None) -> None:
    group = optimizer.param_groups[0]
    group.update(hyper)
    generator = torch.Generator().manual_seed(seed)
    for index, param in enumerate(params):
        # A parameter without a gradient (an adapter slice the loss never reached) is skipped.
        param.grad = None if index == skip else torch.randn(param.shape, generator=generator)
    optimizer.step()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(HYPER, st.none() | st.integers(0, 2)), min_size=1, max_size=5))
def test_steps_equal_torch_adamw_bit_for_bit(steps) -> None:
    ours_params, theirs_params = _params(0), _params(0)
    ours = AdamW(ours_params, lr=1e-4)
    theirs = torch.optim.AdamW(theirs_params, lr=1e-4)
    for seed, (hyper, skip) in enumerate(steps):
        _step(ours, ours_params, hyper, seed, skip)
        _step(theirs, theirs_params, hyper, seed, skip)
        for mine, reference in zip(ours_params, theirs_params, strict=True):
            assert torch.equal(mine, reference)
    assert set(ours.state) == set(theirs.state_dict()["state"])


def test_state_moves_between_torch_adamw_and_ours_both_ways() -> None:
    hyper = {"lr": 1e-2, "betas": (0.9, 0.95), "eps": 1e-8, "weight_decay": 0.0}
    a, b = _params(1), _params(1)
    torch_first = torch.optim.AdamW(a, lr=1e-2)
    ours_first = AdamW(b, lr=1e-2)
    for seed in range(3):
        _step(torch_first, a, hyper, seed, None)
        _step(ours_first, b, hyper, seed, None)

    # torch's state into ours (an older checkpoint), ours into torch's (an older trio-local).
    ours_next = AdamW(a, lr=1e-4)
    ours_next.load_state_dict(torch_first.state_dict())
    torch_next = torch.optim.AdamW(b, lr=1e-4)
    torch_next.load_state_dict(ours_first.state_dict())
    assert ours_first.state_dict()["param_groups"] == torch_first.state_dict()["param_groups"]
    for seed in range(3, 6):
        _step(ours_next, a, hyper, seed, None)
        _step(torch_next, b, hyper, seed, None)
    for mine, reference in zip(a, b, strict=True):
        assert torch.equal(mine, reference)
    saved = ours_next.state_dict()["state"]
    assert all(saved[i]["step"].item() == 6.0 for i in saved)
