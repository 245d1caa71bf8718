"""The stand-ins' weights cache: a cached model is the model a fresh build gives."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from trio_local import catalogue  # noqa: E402
from trio_local.engine import weights_cache  # noqa: E402
from trio_local.engine.model import build_base_model  # noqa: E402

MODEL = "Qwen/Qwen3-0.6B"


def same_weights(a, b) -> bool:
    left, right = a.state_dict(), b.state_dict()
    return left.keys() == right.keys() and all(torch.equal(left[k], right[k]) for k in left)


def test_the_cache_gives_the_built_model_and_replaces_a_damaged_file(tmp_path) -> None:
    spec = catalogue.resolve(MODEL).spec
    fresh, cached = build_base_model(spec)
    assert not cached
    first, cached = build_base_model(spec, tmp_path)
    assert not cached  # an empty cache: built, then stored
    (path,) = tmp_path.glob("standin-*.safetensors")
    assert path == weights_cache.cache_path(tmp_path, spec)
    assert not list(tmp_path.glob(".standin-*"))  # no staging file left behind
    loaded, cached = build_base_model(spec, tmp_path)
    assert cached
    assert same_weights(loaded, fresh) and same_weights(first, fresh)
    assert loaded.lm_head.weight.data_ptr() == loaded.model.embed_tokens.weight.data_ptr()
    ids = torch.arange(100, 140).unsqueeze(0)
    with torch.no_grad():
        assert torch.equal(loaded(ids).logits, fresh(ids).logits)  # rotary tables too

    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])  # a torn write
    rebuilt, cached = build_base_model(spec, tmp_path)
    assert not cached
    assert same_weights(rebuilt, fresh)
    assert build_base_model(spec, tmp_path)[1]  # stored again, whole


def test_the_key_follows_the_id_and_old_files_are_pruned(tmp_path) -> None:
    specs = [catalogue.resolve(f"Qwen/Qwen3-{size}B").spec for size in ("1.7", "4", "8")]
    assert len({weights_cache.cache_key(spec) for spec in specs}) == 3
    for index in range(weights_cache.MAX_FILES + 2):
        (tmp_path / f"standin-old{index}.safetensors").write_bytes(b"x")
    build_base_model(specs[0], tmp_path)
    kept = list(tmp_path.glob("standin-*.safetensors"))
    assert len(kept) == weights_cache.MAX_FILES
    assert weights_cache.cache_path(tmp_path, specs[0]) in kept  # the newest is kept


def test_seeded_weights_do_not_depend_on_what_else_the_process_draws_or_patches() -> None:
    """A stand-in and an adapter get the same weights while another caller has drawn from
    torch's global generator and while transformers has switched torch's init functions off
    process-wide (as its `from_pretrained` does while loading, on any thread)."""
    from transformers.initialization import no_init_weights

    from trio_local.engine.model import LoraSpec, ModelHost

    spec = catalogue.resolve(MODEL).spec
    lora = LoraSpec(8, 11, train_mlp=True, train_attn=True, train_unembed=False)
    plain = ModelHost(spec)
    plain.add_adapter("run", lora)
    torch.manual_seed(1234)
    torch.randn(1000)
    with no_init_weights():
        disturbed = ModelHost(spec)
        disturbed.add_adapter("run", lora)
    assert same_weights(plain.model, disturbed.model)
    adapter = plain.parameters("run")
    assert adapter and all(
        torch.count_nonzero(p) == (0 if "lora_B" in k else p.numel()) for k, p in adapter.items()
    )
    other = ModelHost(spec)
    other.add_adapter("run", LoraSpec(8, 12, train_mlp=True, train_attn=True, train_unembed=False))
    assert not same_weights(plain.model, other.model)  # the seed decides lora_A
