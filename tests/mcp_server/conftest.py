"""Fixtures for trio-mcp tests: an in-process server (no backend started), one on trio-local per
module, and a small real Hugging Face tokenizer with a Qwen-style chat template for the datum
builder."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_server.config import Config
from mcp_server.server import build_server


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def own_local_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The local backend's default data dir, per test: never the user's, never shared."""
    data = tmp_path / "trio-local-data"
    monkeypatch.setenv("TRIO_LOCAL_DATA_DIR", str(data))
    return data


@pytest.fixture
def make_server(tmp_path: Path) -> Callable[..., Any]:
    """Build a server whose backend starts only if a tool needs it (these tests never let it)."""
    built = []

    def factory(**settings: Any) -> Any:
        config = Config(eager_backend=False, audit_log=tmp_path / "audit.jsonl", **settings)
        server, app = build_server(config)
        built.append(app)
        return server

    yield factory
    for app in built:
        app.close()


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Any]]:
    """One in-process server on trio-local per test module (one model build), as (server, app).
    Its max_rank is 8, below the rank-16 checkpoint test_mcp_rewards saves outside the session."""
    root = tmp_path_factory.mktemp("local")
    config = Config(
        backend="local",
        eager_backend=False,
        audit_log=root / "audit.jsonl",
        local_data_dir=root / "data",
        max_rank=8,
    )
    server, app = build_server(config)
    yield server, app
    app.close()


CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
WORDS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "user",
    "assistant",
    "system",
    "\n",
    " ",
    "hello",
    "world",
    "the",
    "answer",
    "is",
    "42",
    "what",
    "?",
]


@pytest.fixture(scope="session")
def tokenizer() -> Any:
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(
        models.WordLevel(vocab={w: i for i, w in enumerate(WORDS)}, unk_token="<|endoftext|>")
    )
    core.pre_tokenizer = pre_tokenizers.Split(
        Regex(r"<\|im_(?:start|end)\|>|\n| |\w+|[^\w\s]"), behavior="isolated"
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|endoftext|>"
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast
