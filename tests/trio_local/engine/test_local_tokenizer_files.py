"""The offline tokenizer files: merges written as "a b" strings tokenize exactly as pairs do."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("transformers")
from tokenizers import Tokenizer

from trio_local import catalogue
from trio_local.engine.tokenizer import cached_build, merges_as_strings

# Text a tokenizer meets: code, prose, CJK, emoji, runs of spaces and newlines, special tokens.
SAMPLES = [
    "Hello world",
    "def f(x):\n    return x  # comment\n\n\n",
    "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
    "你好，世界！这是一个测试。",
    "naïve café 🚀🚀 \u200bzero-width",
    "    indented\t\ttabs\r\nwindows line",
    "1234567890 3.14159 -1e-4",
]
TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60
) | st.sampled_from(SAMPLES)


@pytest.fixture(scope="module", params=catalogue.FAMILIES, ids=lambda family: family.name)
def loaded(request) -> tuple[Tokenizer, list[list[str]], Tokenizer]:
    """The tokenizer as written, the merges it is meant to hold, and the same file with them
    written as pairs (the library's own format)."""
    written = (cached_build(request.param) / "tokenizer.json").read_text(encoding="utf-8")
    data = json.loads(written)
    merges = data["model"]["merges"]
    assert merges and all(isinstance(merge, str) for merge in merges)
    meant = [merge.split(" ") for merge in merges]
    assert all(len(pair) == 2 and all(pair) for pair in meant)
    data["model"]["merges"] = meant
    return Tokenizer.from_str(written), meant, Tokenizer.from_str(json.dumps(data))


def test_the_library_reads_the_string_merges_as_the_pairs_in_order(loaded) -> None:
    strings, meant, _ = loaded
    assert json.loads(strings.to_str())["model"]["merges"] == meant


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=TEXT)
def test_string_merges_tokenize_like_pairs(loaded, text: str) -> None:
    strings, _, pairs = loaded
    assert strings.encode(text).ids == pairs.encode(text).ids


def test_a_vocabulary_with_a_space_keeps_its_merges_as_pairs() -> None:
    spaced = {"model": {"vocab": {"a": 0, "b c": 1}, "merges": [["a", "b c"]]}}
    plain = {"model": {"vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]}}
    assert merges_as_strings(json.dumps(spaced)) == json.dumps(spaced)
    assert json.loads(merges_as_strings(json.dumps(plain)))["model"]["merges"] == ["a b"]


@pytest.fixture(scope="module", params=catalogue.FAMILIES, ids=lambda family: family.name)
def service_and_transformers(request):
    """The engine's tokenizer (the `tokenizers` library alone) and the one the SDK's
    get_tokenizer loads (transformers' AutoTokenizer), on the same files."""
    from trio_local.engine.tokenizer import ServiceTokenizer, load_tokenizer

    directory = cached_build(request.param)
    return ServiceTokenizer(directory), load_tokenizer(directory)


def test_the_service_tokenizer_has_transformers_length(service_and_transformers) -> None:
    service, reference = service_and_transformers
    assert len(service) == len(reference)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data(), skip_special=st.booleans())
def test_the_service_tokenizer_decodes_like_transformers(
    service_and_transformers, data, skip_special: bool
) -> None:
    """What a sample's `text` holds: any ids a sampler may emit (special tokens, the last ids of
    the vocabulary, and ids of real text), decoded with and without the special tokens."""
    service, reference = service_and_transformers
    size = len(reference)
    special = sorted(reference.all_special_ids)
    token = st.integers(0, size - 1) | st.sampled_from(special) | st.integers(size - 300, size - 1)
    text = data.draw(TEXT)
    ids = data.draw(st.lists(token, max_size=30)) + reference.encode(text, add_special_tokens=False)
    expected = reference.decode(ids, skip_special_tokens=skip_special)
    assert service.decode(ids, skip_special_tokens=skip_special) == expected
