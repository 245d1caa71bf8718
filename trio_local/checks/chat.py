"""Chat-format positions, derived from the tokenizer's own chat template.

`ChatTokens.from_tokenizer` renders one message per role through the tokenizer's chat template
and reads off the turn-start token, each role's header (the tokens up to the header's newline)
and the turn-end token, so any ChatML-like template works without a hand-kept token list.
`roles` then labels every position of a token sequence with the part of the conversation it
belongs to.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localfs.atomic import write_atomic

logger = logging.getLogger("trio_local.checks")

MARK = "Zebra"  # a probe message; any word the tokenizer keeps apart from the header's newline
PROBE_ROLES = ("system", "user", "assistant")
HEADER = "header"  # the turn-start token and the role's header tokens
BETWEEN = "between"  # after a turn's end token, before the next turn (ChatML's newline)
OUTSIDE = "outside"  # before the first turn
PROMPT_ROLES = frozenset({"system", "user", "tool", "unknown"})


@dataclass(frozen=True)
class ChatTokens:
    start: int
    end: int
    headers: tuple[tuple[tuple[int, ...], str], ...]  # header token ids -> role, longest first
    stop_ids: frozenset[int]  # ids that end a completion: turn end, EOS (and pad, see below)

    @classmethod
    def from_tokenizer(cls, tokenizer: Any) -> ChatTokens | None:
        if not getattr(tokenizer, "chat_template", None):
            return None
        special = set(tokenizer.all_special_ids)
        special.update(
            index for index, added in tokenizer.added_tokens_decoder.items() if added.special
        )
        mark = tokenizer.encode(MARK, add_special_tokens=False)
        start = end = None
        headers: dict[tuple[int, ...], str] = {}
        for role in PROBE_ROLES:
            text = tokenizer.apply_chat_template([{"role": role, "content": MARK}], tokenize=False)
            ids = tokenizer.encode(text, add_special_tokens=False)
            at = _find(ids, mark)
            first = next((i for i, token in enumerate(ids[:at]) if token in special), None)
            if at < 0 or first is None:
                continue
            start = ids[first]
            header: list[int] = []
            for token in ids[first + 1 : at]:
                header.append(token)
                if "\n" in tokenizer.decode([token]):
                    break
            headers[tuple(header)] = role
            after = next((t for t in ids[at + len(mark) :] if t in special), None)
            if after is not None:
                end = after
        if start is None or end is None:
            return None
        # <|endoftext|>, Qwen's pad token, is also the end of a document in its base format.
        stops = {end, tokenizer.eos_token_id, tokenizer.pad_token_id} - {None}
        ordered = tuple(sorted(headers.items(), key=lambda item: -len(item[0])))
        return cls(start=start, end=end, headers=ordered, stop_ids=frozenset(stops))

    def roles(self, tokens: Sequence[int]) -> list[str] | None:
        """A label per position, or None when the sequence holds no chat turn.

        Content positions get their role ("user", "assistant"...), the turn-end token gets
        "<role>:end", the turn-start token and header get HEADER.
        """
        if self.start not in tokens:
            return None
        labels = [OUTSIDE] * len(tokens)
        first_turn = list(tokens).index(self.start)
        role: str | None = None
        index = 0
        while index < len(tokens):
            token = tokens[index]
            if token == self.start:
                role, width = self._header_at(tokens, index + 1)
                for position in range(index, min(index + 1 + width, len(tokens))):
                    labels[position] = HEADER
                index += 1 + width
                continue
            if role is None:
                labels[index] = OUTSIDE if index < first_turn else BETWEEN
            elif token == self.end:
                labels[index] = f"{role}:end"
                role = None
            else:
                labels[index] = role
            index += 1
        return labels

    def _header_at(self, tokens: Sequence[int], index: int) -> tuple[str, int]:
        for header, role in self.headers:
            if tuple(tokens[index : index + len(header)]) == header:
                return role, len(header)
        return "unknown", 0


# What a memo was derived by: this module's own source, so that a change to the derivation
# makes every memo written before it stale.
_DERIVATION = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
MEMO_NAME = "trio-local-chat-tokens.json"
# The files the chat tokens come from (vocabulary and merges; chat template and special tokens).
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")


def cached_chat_tokens(directory: Path, load_tokenizer: Callable[[], Any]) -> ChatTokens | None:
    """`ChatTokens.from_tokenizer` for the tokenizer files in `directory`, remembered in a file
    there: reading the tokenizer again costs about half a CPU-second in every checked service,
    for a handful of ids. The memo is keyed on the files' content and on this derivation; one
    that is damaged or keyed otherwise is derived again and replaced, one that cannot be written
    is only logged."""
    memo = directory / MEMO_NAME
    try:
        key = _key(directory)
    except OSError:  # the files cannot be read here: derive without a memo
        return ChatTokens.from_tokenizer(load_tokenizer())
    try:
        return _read_memo(memo.read_text(encoding="utf-8"), key)
    except (OSError, ValueError, TypeError, KeyError, RecursionError):
        pass
    chat = ChatTokens.from_tokenizer(load_tokenizer())
    try:
        write_atomic(
            memo, json.dumps(_memo(chat, key)).encode(), mode=0o644, durable=True, parents=True
        )
    except OSError as error:
        logger.warning("trio-local check: cannot remember the chat tokens in %s: %s", memo, error)
    return chat


def _key(directory: Path) -> str:
    digest = hashlib.sha256(_DERIVATION.encode())
    for name in TOKENIZER_FILES:
        digest.update((directory / name).read_bytes())
    return digest.hexdigest()


def _memo(chat: ChatTokens | None, key: str) -> dict[str, Any]:
    if chat is None:
        return {"key": key, "chat": None}
    return {
        "key": key,
        "chat": {
            "start": chat.start,
            "end": chat.end,
            "headers": [[list(ids), role] for ids, role in chat.headers],
            "stop_ids": sorted(chat.stop_ids),
        },
    }


def _read_memo(text: str, key: str) -> ChatTokens | None:
    data = json.loads(text)
    if data["key"] != key:
        raise ValueError("derived from other files or by another derivation")
    chat = data["chat"]
    if chat is None:
        return None
    headers = tuple((_ids(ids), _role(role)) for ids, role in chat["headers"])
    return ChatTokens(
        start=_id(chat["start"]),
        end=_id(chat["end"]),
        headers=headers,
        stop_ids=frozenset(_ids(chat["stop_ids"])),
    )


def _id(value: object) -> int:
    if type(value) is not int or value < 0:
        raise TypeError(f"not a token id: {value!r}")
    return value


def _ids(values: object) -> tuple[int, ...]:
    if not isinstance(values, list):
        raise TypeError(f"not a list of token ids: {values!r}")
    return tuple(_id(value) for value in values)


def _role(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"not a role: {value!r}")
    return value


def is_prompt(label: str) -> bool:
    """Positions a chat fine-tune must not train: other roles' turns and the template."""
    return label == HEADER or label.split(":", 1)[0] in PROMPT_ROLES


def _find(haystack: Sequence[int], needle: Sequence[int]) -> int:
    for i in range(len(haystack) - len(needle) + 1):
        if list(haystack[i : i + len(needle)]) == list(needle):
            return i
    return -1
