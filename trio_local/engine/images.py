"""A deterministic stand-in image encoder for `ImageChunk` inputs.

An image chunk occupies `expected_tokens` positions, which is how pytrio 0.2.9 counts it
(`pytrio.ModelInput.__len__`; for training data without it the SDK infers it from the target
length before sending), or IMAGE_TOKENS positions when a sampling prompt leaves it out. Each
position gets the `<|image_pad|>` token's embedding plus a fixed projection of a byte histogram
of its share of the image file: equal images give equal inputs, different images different
ones, and the LoRA layers after it can learn from them. The encoder itself is frozen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trio_local.engine.errors import EngineError

IMAGE_TOKENS = 64  # positions of an image chunk sent without expected_tokens
MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "jpeg": b"\xff\xd8\xff"}


@dataclass(frozen=True)
class ImageSpan:
    start: int  # first position of the image in the sequence
    length: int
    data: bytes


@dataclass(frozen=True)
class Flattened:
    """A model input as positions: token ids (image positions hold <|image_pad|>) + images."""

    ids: list[int]
    images: tuple[ImageSpan, ...]


def flatten(chunks: Any, where: str, *, vocab_size: int, image_pad_id: int) -> Flattened:
    """Token ids and image spans of a wire model input; `where` names it in errors."""
    ids: list[int] = []
    images: list[ImageSpan] = []
    for index, chunk in enumerate(chunks):
        if chunk.type == "image":
            expected = MAGIC[chunk.format]
            if not chunk.data.startswith(expected):
                raise EngineError(
                    "invalid_image",
                    f"{where}.chunks[{index}] says format '{chunk.format}' but its data is not "
                    f"a {chunk.format.upper()} file; pass the file's bytes and its real format",
                )
            length = chunk.expected_tokens or IMAGE_TOKENS
            images.append(ImageSpan(len(ids), length, bytes(chunk.data)))
            ids.extend([image_pad_id] * length)
            continue
        for position, token in enumerate(chunk.tokens):
            if not 0 <= token < vocab_size:
                raise EngineError(
                    "token_id_out_of_range",
                    f"{where} token {len(ids) + position} is {token}, outside [0, {vocab_size})",
                )
        ids.extend(chunk.tokens)
    return Flattened(ids, tuple(images))


def _features(data: bytes, length: int) -> Any:
    """[length, 256]: the byte histogram of each of `length` equal shares of the file."""
    import numpy as np

    raw = np.frombuffer(data, dtype=np.uint8)
    shares = np.array_split(raw, length) if raw.size >= length else [raw] * length
    table = np.zeros((length, 256), dtype=np.float32)
    for row, share in enumerate(shares):
        counts = np.bincount(share, minlength=256).astype(np.float32)
        table[row] = counts / max(float(counts.sum()), 1.0)
    # Centre and scale so the projection's output has a spread like a token embedding's.
    return (table - 1.0 / 256) * 256.0


def encode(span: ImageSpan, *, seed: int, hidden_size: int, pad_embedding: Any) -> Any:
    """The span's embeddings, [length, hidden_size]; deterministic in (model seed, bytes)."""
    import torch

    generator = torch.Generator().manual_seed(seed ^ 0x1A6E)
    projection = torch.randn(256, hidden_size, generator=generator) * (0.02 / 16)
    features = torch.from_numpy(_features(span.data, span.length))
    return pad_embedding.detach() + features @ projection


def inputs_embeds(host: Any, input_ids: Any, rows: list[tuple[ImageSpan, ...]]) -> Any | None:
    """Embeddings with every image span written in, or None when no row has an image."""
    if not any(rows):
        return None
    embeds = host.embed(input_ids).clone()
    for row, spans in enumerate(rows):
        for span in spans:
            pad = embeds[row, span.start]
            embeds[row, span.start : span.start + span.length] = encode(
                span, seed=host.spec.seed, hidden_size=host.spec.hidden_size, pad_embedding=pad
            )
    return embeds
