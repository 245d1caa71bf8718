"""Each policy loss against a hand computation on a 3-token example (Tinker's definitions).

The model's log-probabilities are leaf tensors, so the test checks both the per-token loss and
its gradient, written out token by token in plain Python.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trio_local.engine.losses import LOSSES, LossInputs, active_positions
from trio_local.errors import EngineError

torch = pytest.importorskip("torch")

LOGPROBS = [-0.5, -1.0, -2.0]  # the model's log p(target) at three positions
SAMPLER = [-0.7, -0.9, -2.5]  # the sampler's log q(target)
ADVANTAGES = [1.0, -2.0, 0.5]
RATIO = [math.exp(p - q) for p, q in zip(LOGPROBS, SAMPLER, strict=True)]  # 1.2214, .9048, 1.6487


def run(name: str, *, config=None, valid=(True, True, True), advantages=ADVANTAGES, totals=None):
    logprobs = torch.tensor([LOGPROBS], requires_grad=True)
    valid_t = torch.tensor([valid])
    active = sum(valid)
    adv_tokens = sum(1 for v, a in zip(valid, advantages, strict=True) if v and a != 0)
    active, adv_tokens = totals or (active, adv_tokens)
    terms = LOSSES[name].fn(
        LossInputs(
            target_logprobs=logprobs * valid_t,
            valid=valid_t,
            weights=torch.ones(1, 3),
            sampler_logprobs=torch.tensor([SAMPLER]),
            advantages=torch.tensor([advantages]),
            config=config or {},
            total_samples=1,
            total_active_tokens=active,
            total_advantage_tokens=adv_tokens,
            loss_name=name,
        )
    )
    terms.objective.backward()
    return terms.elementwise[0].tolist(), logprobs.grad[0].tolist(), terms.token_count


def test_importance_sampling_matches_hand_computation() -> None:
    # loss_t = -ratio_t * A_t; d/dlogp_t = -ratio_t * A_t / N (N = 3 active tokens)
    loss, grad, count = run("importance_sampling")
    expected = [-RATIO[0] * 1.0, -RATIO[1] * -2.0, -RATIO[2] * 0.5]
    assert loss == pytest.approx(expected, rel=1e-6)
    assert loss == pytest.approx([-1.2214028, 1.8096748, -0.8243606], rel=1e-6)
    assert grad == pytest.approx([value / 3 for value in expected], rel=1e-6)
    assert count == 3


def test_ppo_clips_the_ratio_with_its_default_thresholds() -> None:
    # ratios 1.2214, 0.9048, 1.6487 against [0.8, 1.2]:
    #   t0: min(1.2214 * 1, 1.2 * 1) = 1.2 (clipped, no gradient)
    #   t1: min(0.9048 * -2, 0.9048 * -2) = -1.8097 (inside the range: gradient -ratio*A/N)
    #   t2: min(1.6487 * 0.5, 1.2 * 0.5) = 0.6 (clipped, no gradient)
    loss, grad, _ = run("ppo")
    assert loss == pytest.approx([-1.2, 2 * RATIO[1], -0.6], rel=1e-6)
    assert grad == pytest.approx([0.0, 2 * RATIO[1] / 3, 0.0], rel=1e-6, abs=1e-9)


def test_ppo_keeps_the_unclipped_term_when_it_is_smaller() -> None:
    # A negative advantage with a ratio above the range: min(1.6487 * -1, 1.1 * -1) = -1.6487,
    # the unclipped term, which keeps its gradient (-ratio * A / N = 1.6487 / 1).
    loss, grad, _ = run(
        "ppo",
        config={"clip_low_threshold": 0.9, "clip_high_threshold": 1.1},
        valid=(False, False, True),
        advantages=[0.0, 0.0, -1.0],
    )
    assert loss == pytest.approx([0.0, 0.0, RATIO[2]], rel=1e-6)
    assert grad == pytest.approx([0.0, 0.0, RATIO[2]], rel=1e-6)


def test_cispo_uses_the_clipped_ratio_as_a_constant_coefficient() -> None:
    # clip to [0, 1.1]: coefficients 1.1, 0.9048, 1.1; loss_t = -c_t * logp_t * A_t and the
    # gradient is -c_t * A_t / N (the coefficient is detached).
    coefficient = [1.1, RATIO[1], 1.1]
    loss, grad, _ = run("cispo", config={"clip_high_threshold": 1.1})
    expected = [-c * p * a for c, p, a in zip(coefficient, LOGPROBS, ADVANTAGES, strict=True)]
    assert loss == pytest.approx(expected, rel=1e-6)
    assert loss == pytest.approx([0.55, -1.8096748, 1.1], rel=1e-6)
    grads = [-c * a / 3 for c, a in zip(coefficient, ADVANTAGES, strict=True)]
    assert grad == pytest.approx(grads, rel=1e-6)


def test_cispo_default_is_tinkers_one_sided_clip() -> None:
    loss, _, _ = run("cispo")
    expected = [-r * p * a for r, p, a in zip(RATIO, LOGPROBS, ADVANTAGES, strict=True)]
    assert loss == pytest.approx(expected, rel=1e-6)


def test_dro_adds_the_quadratic_penalty() -> None:
    # beta 0.1: objective_t = logp_t * A_t - 0.05 * (logp_t - logq_t)^2, loss_t = -objective_t;
    # d loss/d logp_t = -(A_t - 0.1 * (logp_t - logq_t)) / N_adv.
    loss, grad, count = run("dro", config={"beta": 0.1})
    diffs = [p - q for p, q in zip(LOGPROBS, SAMPLER, strict=True)]  # 0.2, -0.1, 0.5
    expected = [
        -(p * a - 0.05 * d * d) for p, a, d in zip(LOGPROBS, ADVANTAGES, diffs, strict=True)
    ]
    assert loss == pytest.approx(expected, rel=1e-6)
    assert loss == pytest.approx([0.502, -1.9995, 1.0125], rel=1e-6)
    grads = [-(a - 0.1 * d) / 3 for a, d in zip(ADVANTAGES, diffs, strict=True)]
    assert grad == pytest.approx(grads, rel=1e-6)
    assert count == 3


@pytest.mark.parametrize("name", ["importance_sampling", "ppo", "cispo", "dro"])
def test_ignored_targets_and_zero_advantages_mask_positions(name: str) -> None:
    # Position 1 has target -100, position 2 advantage 0: only position 0 counts.
    loss, grad, count = run(name, valid=(True, False, True), advantages=[1.0, -2.0, 0.0])
    assert loss[1] == 0.0 and loss[2] == 0.0
    assert grad[1] == 0.0 and grad[2] == 0.0
    assert loss[0] != 0.0  # (ppo clips position 0, so its gradient may be 0)
    assert count == 1


def test_masked_positions_cannot_overflow_the_ratio() -> None:
    # A masked position with an absurd sampler log-prob must not turn the gradient into NaN.
    logprobs = torch.tensor([[-0.5, 0.0]], requires_grad=True)
    terms = LOSSES["importance_sampling"].fn(
        LossInputs(
            target_logprobs=logprobs,
            valid=torch.tensor([[True, False]]),
            weights=torch.ones(1, 2),
            sampler_logprobs=torch.tensor([[-0.5, -1e4]]),
            advantages=torch.tensor([[1.0, 1.0]]),
            config={},
            total_samples=1,
            total_active_tokens=1,
            total_advantage_tokens=1,
            loss_name="importance_sampling",
        )
    )
    terms.objective.backward()
    assert torch.isfinite(logprobs.grad).all()


def test_the_gradient_is_normalised_by_the_logical_batch_totals() -> None:
    # The SDK splits a batch into chunks and sends the whole batch's token counts with each.
    _, grad_alone, _ = run("importance_sampling")
    _, grad_in_batch, _ = run("importance_sampling", totals=(12, 12))
    assert grad_in_batch == pytest.approx([g * 3 / 12 for g in grad_alone], rel=1e-6)


@pytest.mark.parametrize(
    ("name", "config", "field"),
    [
        ("ppo", {"clip_epsilon": 0.2}, "clip_epsilon"),
        ("ppo", {"clip_low_threshold": "0.8"}, "clip_low_threshold"),
        ("ppo", {"clip_low_threshold": 1.3, "clip_high_threshold": 1.2}, "clip_low_threshold"),
        ("dro", {"beta": -1.0}, "beta"),
        ("importance_sampling", {"beta": 0.1}, "beta"),
    ],
)
def test_bad_loss_config_names_the_field(name: str, config: dict, field: str) -> None:
    with pytest.raises(EngineError) as error:
        run(name, config=config)
    assert error.value.code == "invalid_loss_config"
    assert field in error.value.message


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(sorted(LOSSES)),
    rows=st.lists(
        st.tuples(
            st.floats(-8.0, -0.01),  # log p
            st.floats(-8.0, -0.01),  # sampler log q
            st.sampled_from([0.0, 0.0, 1.0, -0.5, 2.0]),  # weight
            st.sampled_from([0.0, 0.0, 1.0, -0.5, 2.0]),  # advantage
            st.booleans(),  # valid
        ),
        min_size=1,
        max_size=8,
    ),
)
def test_a_position_the_gate_leaves_out_has_exactly_zero_gradient(name: str, rows) -> None:
    # The trainer scores such positions without autograd (LOSSES[name].gate): a loss whose
    # gradient reached them would silently lose that part of its gradient.
    logprobs = torch.tensor([[row[0] for row in rows]], requires_grad=True)
    valid = torch.tensor([[row[4] for row in rows]])
    weights = torch.tensor([[row[2] for row in rows]])
    advantages = torch.tensor([[row[3] for row in rows]])
    terms = LOSSES[name].fn(
        LossInputs(
            target_logprobs=logprobs * valid,
            valid=valid,
            weights=weights,
            sampler_logprobs=torch.tensor([[row[1] for row in rows]]),
            advantages=advantages,
            config={},
            total_samples=1,
            total_active_tokens=len(rows),
            total_advantage_tokens=len(rows),
            loss_name=name,
        )
    )
    terms.objective.backward()
    gate = weights if LOSSES[name].gate == "weights" else advantages
    out = ~active_positions(valid, gate)
    assert logprobs.grad is not None
    assert (logprobs.grad[out] == 0).all()
    assert terms.token_count == int((~out).sum())
