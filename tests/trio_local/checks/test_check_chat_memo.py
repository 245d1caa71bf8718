"""The checker's chat tokens are derived from a tokenizer once per build and remembered there."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("transformers")

from trio_local import catalogue
from trio_local.checks.chat import MEMO_NAME, ChatTokens, cached_chat_tokens
from trio_local.engine.tokenizer import cached_build, load_tokenizer


@pytest.fixture(scope="module")
def build(tmp_path_factory) -> Path:
    """A private copy of the Qwen3 build, so that memos written here touch no shared cache."""
    copy = tmp_path_factory.mktemp("build") / "qwen3"
    shutil.copytree(cached_build(catalogue.QWEN3), copy, ignore=shutil.ignore_patterns(MEMO_NAME))
    return copy


@pytest.fixture(scope="module")
def derived(build: Path) -> ChatTokens:
    chat = ChatTokens.from_tokenizer(load_tokenizer(build))
    assert chat is not None
    return chat


_LOADED: dict[Path, object] = {}


class Loads:
    """A tokenizer loader that counts its calls (each directory is read once per test run)."""

    def __init__(self, directory: Path) -> None:
        self.directory, self.count = directory, 0

    def __call__(self):
        self.count += 1
        if self.directory not in _LOADED:
            _LOADED[self.directory] = load_tokenizer(self.directory)
        return _LOADED[self.directory]


def test_the_first_derivation_is_remembered_and_the_next_service_reads_it(build, derived) -> None:
    (build / MEMO_NAME).unlink(missing_ok=True)
    first = Loads(build)
    assert cached_chat_tokens(build, first) == derived and first.count == 1
    again = Loads(build)
    assert cached_chat_tokens(build, again) == derived and again.count == 0
    assert derived.roles([derived.start, *derived.headers[0][0], 7, derived.end]) is not None


DAMAGED = st.one_of(
    st.binary(max_size=64).map(lambda data: data.decode("latin-1")),
    st.sampled_from(
        [
            "",
            "{}",
            "null",
            "[" * 100_000,
            '{"key": "other", "chat": null}',
            '{"key": 5}',
            '{"chat": {"start": 1}}',
        ]
    ),
)


@settings(max_examples=25, deadline=None)
@given(text=DAMAGED, field=st.sampled_from(["start", "end", "headers", "stop_ids"]))
def test_a_damaged_or_stale_memo_is_derived_again_and_replaced(
    build, derived, text: str, field: str
) -> None:
    memo = build / MEMO_NAME
    cached_chat_tokens(build, Loads(build))
    good = json.loads(memo.read_text())
    for content in (text, _with(good, field, "x"), _with(good, field, [-1])):
        memo.write_text(content)
        loads = Loads(build)
        assert cached_chat_tokens(build, loads) == derived and loads.count == 1, content
        assert json.loads(memo.read_text()) == good  # replaced by a sound memo


def _with(memo: dict, field: str, value: object) -> str:
    return json.dumps({**memo, "chat": {**memo["chat"], field: value}})


def test_a_memo_that_cannot_be_written_still_gives_the_tokens(
    monkeypatch, caplog, build, derived
) -> None:
    from trio_local.checks import chat

    (build / MEMO_NAME).unlink(missing_ok=True)

    def full_disk(path: Path, data: bytes, **_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(chat, "write_atomic", full_disk)
    loads = Loads(build)
    assert cached_chat_tokens(build, loads) == derived and loads.count == 1
    assert "cannot remember the chat tokens" in caplog.text
    assert not (build / MEMO_NAME).exists()


def test_a_memo_is_not_trusted_for_other_tokenizer_files(tmp_path, build, derived) -> None:
    cached_chat_tokens(build, Loads(build))
    edited = tmp_path / "edited"
    shutil.copytree(build, edited)  # the memo comes along
    config = json.loads((edited / "tokenizer_config.json").read_text())
    config["chat_template"] = config["chat_template"].replace("<|im_start|>", "<|im_end|>")
    (edited / "tokenizer_config.json").write_text(json.dumps(config))
    loads = Loads(edited)
    cached_chat_tokens(edited, loads)
    assert loads.count == 1


def test_a_tokenizer_without_a_chat_template_is_remembered_as_none(tmp_path, build) -> None:
    plain = tmp_path / "plain"
    shutil.copytree(build, plain)
    config = json.loads((plain / "tokenizer_config.json").read_text())
    config.pop("chat_template")
    (plain / "tokenizer_config.json").write_text(json.dumps(config))
    assert cached_chat_tokens(plain, Loads(plain)) is None
    loads = Loads(plain)
    assert cached_chat_tokens(plain, loads) is None and loads.count == 0
