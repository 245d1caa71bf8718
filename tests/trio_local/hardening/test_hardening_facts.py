"""trio-local's limits are pytrio_facts' limits: one source, tied here by behaviour."""

from __future__ import annotations

import importlib

import pytest

from pytrio_facts import LIMITS, LOSS_NAMES, LOSSES
from trio_local.engine.losses import LOSSES as REGISTRY
from trio_local.engine.losses.base import LossInputs
from trio_local.errors import EngineError

torch = pytest.importorskip("torch")


def _inputs(name: str, config: dict) -> LossInputs:
    shape = (1, 3)
    return LossInputs(
        target_logprobs=torch.full(shape, -1.0, requires_grad=True),
        valid=torch.ones(shape, dtype=torch.bool),
        weights=torch.ones(shape),
        sampler_logprobs=torch.full(shape, -1.1),
        advantages=torch.ones(shape),
        config=config,
        total_samples=1,
        total_active_tokens=3,
        total_advantage_tokens=3,
        loss_name=name,
    )


def test_the_loss_registry_is_the_sdk_loss_names() -> None:
    assert sorted(REGISTRY) == sorted(LOSS_NAMES)


@pytest.mark.parametrize("fact", LOSSES, ids=lambda fact: fact.name)
def test_each_loss_takes_exactly_its_facts_config_keys(fact) -> None:
    loss = REGISTRY[fact.name].fn
    defaults = getattr(importlib.import_module(loss.__module__), "DEFAULTS", {})
    assert sorted(defaults) == sorted(getattr(fact, "config_keys", ()))
    # the documented keys, given together at their defaults, are accepted
    assert loss(_inputs(fact.name, dict(defaults))).token_count > 0
    with pytest.raises(EngineError, match="not used by loss"):
        loss(_inputs(fact.name, {"surely_not_a_setting": 1.0}))


def test_rank_and_checkpoint_name_bounds_are_the_facts() -> None:
    from trio_local.protocol import bounds

    assert (LIMITS.lora_rank_min, LIMITS.lora_rank_max) == (bounds.RANK_MIN, bounds.RANK_MAX)
    assert bounds.CHECKPOINT_NAME.pattern == LIMITS.checkpoint_name_pattern
    assert LIMITS.checkpoint_name_max_length == bounds.CHECKPOINT_NAME_MAX
