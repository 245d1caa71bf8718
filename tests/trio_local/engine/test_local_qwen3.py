"""trio-local's own Qwen3 and LoRA layers against transformers' Qwen3ForCausalLM and peft.

The service computes with `trio_local.engine.qwen3` so that it never imports transformers or
peft; these tests hold it to the libraries it replaces: the same seeded weights under the same
names, the same logits (padded batches and KV-cached decoding included), the same adapter
weights and keys, and checkpoints that load in both directions.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from trio_local.catalogue import LORA_ALPHA, StandInSpec
from trio_local.engine.model import BASE_ADAPTER, LoraSpec, ModelHost

SPEC = StandInSpec(
    vocab_size=300,
    hidden_size=64,
    intermediate_size=96,
    num_layers=2,
    num_heads=4,
    num_kv_heads=2,
    head_dim=16,
    max_positions=4096,
    seed=11,
    eos_id=3,
    pad_id=4,
)
# What transformers and peft say about their own set-up here, not about the comparison.
pytestmark = pytest.mark.filterwarnings(
    "ignore:`is_gradient_checkpointing` is deprecated:FutureWarning",
    "ignore:Model has `tie_word_embeddings=True`:UserWarning",
)
TOLERANCE = {"atol": 2e-5, "rtol": 1e-4}


def _hf_model(spec: StandInSpec):
    """transformers' Qwen3ForCausalLM of the stand-in's shape, seeded as trio-local seeded it
    before it had layers of its own (the draw order of the sorted parameter names)."""
    from transformers import Qwen3Config, Qwen3ForCausalLM

    config = Qwen3Config(
        vocab_size=spec.vocab_size,
        hidden_size=spec.hidden_size,
        intermediate_size=spec.intermediate_size,
        num_hidden_layers=spec.num_layers,
        num_attention_heads=spec.num_heads,
        num_key_value_heads=spec.num_kv_heads,
        head_dim=spec.head_dim,
        max_position_embeddings=spec.max_positions,
        tie_word_embeddings=True,
        bos_token_id=spec.pad_id,
        eos_token_id=spec.eos_id,
        pad_token_id=spec.pad_id,
    )
    with torch.device("meta"):
        model = Qwen3ForCausalLM(config)
    model.to_empty(device="cpu")
    model.tie_weights()
    generator = torch.Generator().manual_seed(spec.seed)
    with torch.no_grad():
        for name, param in sorted(model.named_parameters()):
            if param.ndim >= 2:
                param.normal_(0.0, config.initializer_range, generator=generator)
            else:
                assert name.endswith("norm.weight"), name
                param.fill_(1.0)
        model.model.embed_tokens.weight[spec.pad_id].zero_()
    model.model.rotary_emb = type(model.model.rotary_emb)(config=config)
    return model.eval()


def _peft_model(base, spec: LoraSpec, name: str):
    from peft import LoraConfig, get_peft_model

    config = LoraConfig(
        r=spec.rank,
        lora_alpha=LORA_ALPHA,
        lora_dropout=0.0,
        bias="none",
        target_modules=spec.target_modules(),
    )
    return get_peft_model(base, config, adapter_name=name)


@pytest.fixture(scope="module")
def host() -> ModelHost:
    return ModelHost(SPEC)


@pytest.fixture(scope="module")
def hf():
    return _hf_model(SPEC)


def test_the_seeded_weights_and_their_names_are_transformers_own(host, hf):
    ours = {k: v for k, v in host.causal_lm.state_dict().items() if ".lora_" not in k}
    # peft's layout renames a wrapped linear's weight to base_layer.weight; the base model's
    # own state (what the weights cache stores) is transformers' names and values exactly.
    ours = {k.replace(".base_layer.", "."): v for k, v in ours.items()}
    theirs = hf.state_dict()
    assert set(ours) == set(theirs)
    for key, value in theirs.items():
        assert torch.equal(ours[key], value), key


def _hf_logits(hf, ids, mask=None):
    with torch.no_grad():
        return hf(input_ids=ids, attention_mask=mask).logits


@settings(max_examples=15, deadline=None)
@given(
    st.integers(1, 3),
    st.integers(1, 40),
    st.lists(st.integers(0, 39), min_size=3, max_size=3),
    st.integers(0, 2**31),
)
def test_logits_match_transformers_with_right_padding(host, hf, batch, length, cuts, seed):
    host.activate(BASE_ADAPTER)
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, SPEC.vocab_size, (batch, length), generator=generator)
    lengths = [max(1, min(length, cut + 1)) for cut in cuts[:batch]]
    mask = torch.tensor([[1] * n + [0] * (length - n) for n in lengths])
    with torch.no_grad():
        ours = host.causal_lm.lm_head(host.hidden_states(ids, mask))
    theirs = _hf_logits(hf, ids, mask)
    for row, n in enumerate(lengths):  # padding positions carry no meaning in either
        torch.testing.assert_close(ours[row, :n], theirs[row, :n], **TOLERANCE)
    assert torch.isfinite(ours).all()  # padding rows attend to themselves: never NaN


def test_kv_cached_decoding_matches_one_full_pass(host, hf):
    host.activate(BASE_ADAPTER)
    ids = torch.randint(0, SPEC.vocab_size, (2, 9), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        first = host.causal_lm(input_ids=ids[:, :5], logits_to_keep=1)
        steps = [first.logits[:, -1]]
        for position in range(5, 9):
            out = host.causal_lm(
                input_ids=ids[:, position : position + 1], cache=first.cache, logits_to_keep=1
            )
            steps.append(out.logits[:, -1])
    theirs = _hf_logits(hf, ids)
    torch.testing.assert_close(torch.stack(steps, 1), theirs[:, 4:], **TOLERANCE)


@pytest.mark.parametrize(
    "lora",
    [
        LoraSpec(8, 5, train_mlp=True, train_attn=True, train_unembed=False),
        LoraSpec(4, 6, train_mlp=False, train_attn=True, train_unembed=True),
        LoraSpec(2, 7, train_mlp=True, train_attn=False, train_unembed=True),
    ],
    ids=["mlp+attn", "attn+unembed", "mlp+unembed"],
)
def test_adapters_match_peft_in_keys_outputs_and_gradients(lora):
    from peft import get_peft_model_state_dict, set_peft_model_state_dict

    host = ModelHost(SPEC)
    host.add_adapter("run", lora)
    host.activate("run")
    with torch.no_grad():  # a trained adapter: lora_B is zero when fresh
        for key, param in host.parameters("run").items():
            if "lora_B" in key:
                param.normal_(0.0, 0.05, generator=torch.Generator().manual_seed(len(key)))
    state = host.state("run")

    peft = _peft_model(_hf_model(SPEC), lora, "run")
    theirs = get_peft_model_state_dict(peft, adapter_name="run", save_embedding_layers=False)
    assert set(state) == set(theirs)  # checkpoint files keep peft's keys
    result = set_peft_model_state_dict(peft, state, adapter_name="run")
    assert not result.unexpected_keys
    peft.eval()

    ids = torch.randint(0, SPEC.vocab_size, (2, 7), generator=torch.Generator().manual_seed(2))
    ours = host.causal_lm(input_ids=ids).logits
    expected = peft(input_ids=ids).logits
    torch.testing.assert_close(ours, expected, **TOLERANCE)

    ours.square().mean().backward()
    expected.square().mean().backward()
    grads = {k: p.grad for k, p in peft.named_parameters() if p.grad is not None}
    mine = host.parameters("run")
    assert {k.replace(".run.", ".") for k in grads} == {k.replace(".run.", ".") for k in mine}
    for key, grad in grads.items():
        torch.testing.assert_close(mine[key].grad, grad, atol=1e-5, rtol=1e-3)
    # Only the active adapter takes gradients: the base weights and every other adapter do not.
    trainable = {k for k, p in host.model.named_parameters() if p.requires_grad}
    assert trainable == set(host.parameters("run"))
    host.activate(BASE_ADAPTER)
    assert not any(p.requires_grad for p in host.model.parameters())

    # ... and a checkpoint written by peft loads here, as ours loads there.
    fresh = ModelHost(SPEC)
    fresh.add_adapter("copy", lora)
    fresh.load_state("copy", theirs)
    fresh.activate("copy")
    with torch.no_grad():
        torch.testing.assert_close(fresh.causal_lm(input_ids=ids).logits, expected, **TOLERANCE)


LAYER_0 = "base_model.model.model.layers.0"
Q_PROJ = f"{LAYER_0}.self_attn.q_proj"


@pytest.mark.parametrize(
    "damage",
    [
        # a weight the adapter does not have (it trains no MLP)
        lambda state: state.update(
            {f"{Q_PROJ[:-21]}mlp.up_proj.lora_A.weight": torch.zeros(2, 64)}
        ),
        # another adapter's weight by its full name: the frozen base adapter's
        lambda state: state.update({f"{Q_PROJ}.lora_B._base.weight": torch.ones(64, 4)}),
        # a base weight
        lambda state: state.update({f"{Q_PROJ}.base_layer.weight": torch.zeros(64, 64)}),
        # the right key with another rank's shape (peft refuses a size mismatch)
        lambda state: state.update({f"{Q_PROJ}.lora_A.weight": torch.ones(1, 64)}),
        lambda state: state.update({f"{Q_PROJ}.lora_B.weight": torch.tensor(1.0)}),
    ],
    ids=["other-module", "other-adapter", "base-weight", "other-rank", "scalar"],
)
def test_an_adapter_checkpoint_that_does_not_fit_is_refused_and_changes_nothing(host, damage):
    from trio_local.errors import EngineError

    host.add_adapter("small", LoraSpec(2, 0, train_mlp=False, train_attn=True, train_unembed=False))
    try:
        before = {k: v.clone() for k, v in host.model.state_dict().items()}
        state = host.state("small")
        damage(state)
        with pytest.raises(EngineError, match="does not have"):
            host.load_state("small", state)
        after = host.model.state_dict()
        assert all(torch.equal(before[k], after[k]) for k in before)  # all or nothing
    finally:
        host.remove_adapter("small")


def test_new_tokens_after_a_cache_attend_causally(host, hf):
    """A prompt fed in two pieces (a cache, then several tokens at once) scores as one pass."""
    host.activate(BASE_ADAPTER)
    ids = torch.randint(0, SPEC.vocab_size, (2, 8), generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        first = host.causal_lm(input_ids=ids[:, :3])
        rest = host.causal_lm(input_ids=ids[:, 3:], cache=first.cache)
    joined = torch.cat([first.logits, rest.logits], dim=1)
    torch.testing.assert_close(joined, _hf_logits(hf, ids), **TOLERANCE)


def test_the_service_engine_imports_neither_transformers_nor_peft(tmp_path):
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from trio_local.catalogue import StandInSpec\n"
        "from trio_local.engine.model import LoraSpec, ModelHost\n"
        f"host = ModelHost(StandInSpec(**{SPEC.__dict__!r}))\n"
        "host.exercise()\n"
        "host.add_adapter('r', LoraSpec(4, 0, True, True, True))\n"
        "print(sorted(m for m in ('transformers', 'peft') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
