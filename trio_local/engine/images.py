"""Image chunks: sized the way the model's processor sizes them, then a stand-in encoder.

An image occupies as many positions as the model's public image processor gives it
(pytrio_facts.vision: the processor's resize to its pixel bounds, patches, merges), read from
the image's own width and height, whatever `expected_tokens` says: pytrio 0.2.9 documents
`expected_tokens` as a local length estimate that the service recomputes from the image
(`pytrio.types.ImageChunk`). Training data sized with a wrong estimate therefore no longer lines
up with its targets and fails; a sampling prompt's estimate is ignored (`--check` reports it).
Models of a text-only family refuse image chunks.

Each position gets the `<|image_pad|>` token's embedding plus a fixed projection of a byte
histogram of its share of the image file: equal images give equal inputs, different images
different ones, and the LoRA layers after it can learn from them. The encoder itself is frozen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pytrio_facts import vision
from trio_local.engine.image_size import image_size
from trio_local.errors import EngineError

MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "jpeg": b"\xff\xd8\xff"}


@dataclass(frozen=True)
class ImageSpan:
    start: int  # first position of the image in the sequence
    length: int  # the processor's count for this image
    data: bytes
    chunk: int = 0  # the chunk's index in its model input
    width: int = 0
    height: int = 0
    estimate: int | None = None  # the chunk's expected_tokens as sent

    @property
    def wrong_estimate(self) -> bool:
        return self.estimate is not None and self.estimate != self.length


@dataclass(frozen=True)
class Flattened:
    """A model input as positions: token ids (image positions hold <|image_pad|>) + images."""

    ids: list[int]
    images: tuple[ImageSpan, ...]


def processor_for(model_id: str, where: str) -> vision.ImageProcessor:
    """The image processor of `model_id`; EngineError when its family takes no images."""
    family = vision.family_of(model_id)
    if family is None or family.processor is None:
        kind = f"a text-only {family.name} model" if family else "not a known vision model"
        raise EngineError(
            "image_input_unsupported",
            f"{where} has an image chunk, but '{model_id}' is {kind}: it takes token ids only. "
            "Send images to a vision model (Qwen3-VL, Qwen3.5 or Qwen3.6 ids from "
            "get_supported_models()) or leave the image out",
        )
    return family.processor


def image_span(chunk: Any, where: str, *, start: int, index: int, model_id: str) -> ImageSpan:
    """One wire image chunk, sized by `model_id`'s processor from the image's own header."""
    processor = processor_for(model_id, where)
    label = f"{where}.chunks[{index}]"
    if not chunk.data.startswith(MAGIC[chunk.format]):
        raise EngineError(
            "invalid_image",
            f"{label} says format '{chunk.format}' but its data is not a "
            f"{chunk.format.upper()} file; pass the file's bytes and its real format",
        )
    try:
        width, height = image_size(bytes(chunk.data), chunk.format)
        length = processor.tokens(height, width)
    except ValueError as error:  # ImageHeaderError, or an aspect ratio over the processor's
        raise EngineError("invalid_image", f"{label}: {error}") from None
    return ImageSpan(start, length, bytes(chunk.data), index, width, height, chunk.expected_tokens)


def image_positions(chunk: Any, model_id: str) -> int | None:
    """The positions an image chunk takes in `model_id`'s input, counted from the image's
    header as `image_span` counts them (no decoding); None when it cannot be counted (not an
    image of that format, or a model that takes none), which `image_span` then refuses."""
    try:
        processor = processor_for(model_id, "prompt")
        if not chunk.data.startswith(MAGIC[chunk.format]):
            return None
        width, height = image_size(bytes(chunk.data), chunk.format)
        return processor.tokens(height, width)
    except (EngineError, ValueError):
        return None


def flatten(
    chunks: Any, where: str, *, vocab_size: int, image_pad_id: int, model_id: str
) -> Flattened:
    """Token ids and image spans of a wire model input; `where` names it in errors."""
    ids: list[int] = []
    images: list[ImageSpan] = []
    for index, chunk in enumerate(chunks):
        if chunk.type == "image":
            span = image_span(chunk, where, start=len(ids), index=index, model_id=model_id)
            images.append(span)
            ids.extend([image_pad_id] * span.length)
            continue
        for position, token in enumerate(chunk.tokens):
            if not 0 <= token < vocab_size:
                raise EngineError(
                    "token_id_out_of_range",
                    f"{where} token {len(ids) + position} is {token}, outside [0, {vocab_size})",
                )
        ids.extend(chunk.tokens)
    return Flattened(ids, tuple(images))


def estimate_mismatch(flat: Flattened, where: str, model_id: str, targets: int) -> EngineError:
    """The failure of a datum whose targets were sized with a wrong expected_tokens."""
    wrong = "; ".join(
        f"{where}.chunks[{span.chunk}] is a {span.width}x{span.height} image, which "
        f"{model_id}'s image processor turns into {span.length} tokens, but its "
        f"expected_tokens says {span.estimate}"
        for span in flat.images
        if span.wrong_estimate
    )
    return EngineError(
        "expected_tokens_mismatch",
        f"{wrong}. The service counts an image's positions from the image itself, so the "
        f"input has {len(flat.ids)} positions and the {targets} target_tokens/weights do not "
        "line up; compute expected_tokens from the image size with the model's processor "
        "settings and size the targets with it",
    )


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
