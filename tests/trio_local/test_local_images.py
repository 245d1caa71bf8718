"""Image chunks under trio-local, driven by the real SDK: an image occupies the positions the
model's image processor gives it (the arithmetic references/vision.md states, run from the page
itself), whatever `expected_tokens` says; a wrong estimate fails training data and is reported
by `--check`; text-only models refuse images. Plus the header reader and the sizing, directly.
"""

from __future__ import annotations

import json
import re
import struct
import urllib.request
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytrio_facts import vision
from trio_local.engine.image_size import ImageHeaderError, image_size

ROOT = Path(__file__).resolve().parents[2]
# Qwen3's vocabulary (as the text model's): a cheaper stand-in than Qwen3.5's 248k rows, and the
# tokenizer the service already loaded for the default model decodes its samples.
VISION_MODEL = "Qwen/Qwen3-VL-2B-Instruct"
TEXT_MODEL = "Qwen/Qwen3-4B-Instruct-2507"
BEFORE = [151644, 872, 198, 151652]  # <|im_start|>user\n<|vision_start|>
AFTER = [151653, 3838, 374, 419, 30, 151645]  # <|vision_end|>What is this?<|im_end|>
SIZES = [(16, 16), (64, 48), (100, 20), (320, 250)]  # width x height: 64, 70, 72, 80 tokens


def png(width: int, height: int, rgb: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + body))
        return struct.pack(">I", len(body)) + kind + body + crc

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    pixels = zlib.compress((b"\x00" + bytes(rgb) * width) * height)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def jpeg_header(width: int, height: int) -> bytes:
    """SOI, a JFIF APP0 segment, then a baseline SOF0 frame header (no scan data)."""
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof0 = b"\xff\xc0" + struct.pack(">HBHHB", 17, 8, height, width, 3) + b"\x01\x22\x00" * 3
    return b"\xff\xd8" + app0 + sof0 + b"\xff\xd9"


def docs_expected_tokens():
    """The page's own `expected_tokens(width, height, patch, merge, min_pixels, max_pixels)`."""
    text = (ROOT / "references" / "vision.md").read_text(encoding="utf-8")
    block = next(
        b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "def expected_tokens" in b
    )
    namespace: dict = {}
    exec(block, namespace)
    return namespace["expected_tokens"]


# -- without a service --------------------------------------------------------------------------


def test_header_sizes_of_png_and_jpeg() -> None:
    assert image_size(png(64, 48), "png") == (64, 48)
    assert image_size(jpeg_header(1920, 1080), "jpeg") == (1920, 1080)
    with pytest.raises(ImageHeaderError, match="PNG signature"):
        image_size(jpeg_header(2, 2), "png")
    with pytest.raises(ImageHeaderError, match="start-of-frame"):
        image_size(b"\xff\xd8\xff\xd9", "jpeg")
    with pytest.raises(ImageHeaderError, match="0x5"):
        image_size(png(1, 1)[:16] + struct.pack(">II", 0, 5) + png(1, 1)[24:], "png")


def test_the_docs_arithmetic_is_the_facts_and_the_engines() -> None:
    from trio_local.engine.images import flatten

    expected_tokens = docs_expected_tokens()
    processor = vision.family_of(VISION_MODEL).processor
    settings = (processor.patch_size, processor.merge_size)
    bounds = (processor.min_pixels, processor.max_pixels)
    for width, height in [*SIZES, (1920, 1080), (8000, 8000), (33, 31)]:
        stated = expected_tokens(width, height, *settings, *bounds)
        assert stated == vision.image_tokens(VISION_MODEL, width, height)

        class Chunk:  # the wire chunk's fields flatten reads
            type, format, data, expected_tokens = "image", "png", png(1, 1), None

        Chunk.data = png(1, 1)[:16] + struct.pack(">II", width, height) + png(1, 1)[24:]
        flat = flatten([Chunk()], "prompt", vocab_size=10, image_pad_id=7, model_id=VISION_MODEL)
        assert len(flat.ids) == stated and flat.images[0].length == stated


# -- against trio-local -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def service() -> Iterator:
    pytest.importorskip("torch")
    import pytrio as trio

    import trio_local

    trio.configure_observability(enabled=False)
    with trio_local.serve_in_background(check=True) as running:
        yield running


@pytest.fixture(scope="module")
def client(service):
    import pytrio as trio

    return trio.ServiceClient()


def image_datum(width: int, height: int, estimate: int | None, targets: int):
    """before + image + after and `targets` targets: -100 (and weight 0) on the image's positions
    (also what keeps this cheap: trio-local scores no -100 position)."""
    import pytrio as trio

    image = trio.ImageChunk(data=png(width, height), format="png", expected_tokens=estimate)
    text = len(BEFORE) + len(AFTER)
    weights = [1.0] * len(BEFORE) + [0.0] * (targets - text) + [1.0] * len(AFTER)
    return trio.Datum(
        model_input=trio.ModelInput(
            chunks=[
                trio.types.EncodedTextChunk(tokens=BEFORE),
                image,
                trio.types.EncodedTextChunk(tokens=AFTER),
            ]
        ),
        loss_fn_inputs={
            "target_tokens": [-100 if w == 0 else 9707 for w in weights],
            "weights": weights,
        },
    )


def read_findings(service) -> dict[str, dict]:
    request = urllib.request.Request(
        service.env["TRIO_LOCAL_STATS_URL"], headers={"X-API-Key": service.api_key}
    )
    with urllib.request.urlopen(request, timeout=60) as reply:
        checked = json.load(reply)["checks"]
    assert checked["check_errors"] == {}, checked
    return {finding["check"]: finding for finding in checked["findings"]}


def test_images_take_the_processors_positions_and_a_wrong_estimate_fails(service, client) -> None:
    import pytrio as trio
    from pytrio.errors.event import EventFailedError

    expected_tokens = docs_expected_tokens()
    processor = vision.family_of(VISION_MODEL).processor
    settings = (processor.patch_size, processor.merge_size, processor.min_pixels)
    counts = [expected_tokens(w, h, *settings, processor.max_pixels) for w, h in SIZES]
    assert counts == [64, 70, 72, 80]  # scaled up (three of them) or only rounded (250 -> 256)
    text = len(BEFORE) + len(AFTER)
    training = client.create_lora_training_client(base_model=VISION_MODEL, rank=4)

    right = [image_datum(w, h, n, text + n) for (w, h), n in zip(SIZES, counts, strict=True)]
    inferred = image_datum(64, 48, None, text + 70)  # the SDK infers expected_tokens = 70
    output = training.forward([*right, inferred], "cross_entropy").result()
    lengths = [len(out["logprobs"].tolist()) for out in output.loss_fn_outputs]
    assert lengths == [text + n for n in counts] + [text + 70]
    assert output.metrics["token_count"] == text * 5  # the image positions weigh 0

    guesses = [4, 12, 24, 81]  # 4 for a 16x16 image: (16 / 16) ** 2 * 4, a guess seen in use
    for (width, height), n, wrong in zip(SIZES, counts, guesses, strict=True):
        datum = image_datum(width, height, wrong, text + wrong)  # sized by the wrong guess
        with pytest.raises(EventFailedError) as failed:
            training.forward_backward([datum], "cross_entropy").result()
        assert failed.value.code == "expected_tokens_mismatch"
        message = str(failed.value)
        assert f"{width}x{height} image" in message and f"into {n} tokens" in message
        assert f"expected_tokens says {wrong}" in message
    with pytest.raises(ValueError, match=r"target_tokens must have shape \[\d+\]"):
        training.forward([image_datum(16, 16, 4, text + 64)], "cross_entropy").result()
    # the run goes on: the failures were the events', not the client's
    assert training.forward(right[:1], "cross_entropy").result().metrics["token_count"] == text

    sampler = client.create_sampling_client(base_model=VISION_MODEL)
    guessed = trio.ModelInput(
        chunks=[
            trio.types.EncodedTextChunk(tokens=BEFORE),
            trio.ImageChunk(data=png(16, 16), format="png", expected_tokens=4),
            trio.types.EncodedTextChunk(tokens=AFTER),
        ]
    )
    params = trio.SamplingParams(max_tokens=2, temperature=0.0)
    sequence = sampler.sample(prompt=guessed, num_samples=1, sampling_params=params).result()
    assert len(sequence.sequences[0].tokens) >= 1  # the service ignored the estimate

    found = read_findings(service)["image-expected-tokens"]
    assert found["count"] == len(SIZES) + 1 and found["rule"] is None
    assert {k: found["example"][k] for k in ("size", "processor_tokens")} == {
        "size": "16x16",
        "processor_tokens": 64,
    }


def test_text_only_models_refuse_images(client) -> None:
    import pytrio as trio
    from pytrio.errors.event import EventFailedError

    assert not vision.takes_images(TEXT_MODEL)
    text = len(BEFORE) + len(AFTER)
    training = client.create_lora_training_client(base_model=TEXT_MODEL, rank=4)
    with pytest.raises(EventFailedError) as failed:
        training.forward([image_datum(16, 16, 64, text + 64)], "cross_entropy").result()
    assert failed.value.code == "image_input_unsupported"
    assert TEXT_MODEL in str(failed.value) and "text-only Qwen3 model" in str(failed.value)
    plain = trio.Datum(
        model_input=trio.ModelInput.from_ints(BEFORE), loss_fn_inputs={"target_tokens": BEFORE}
    )
    assert training.forward([plain], "cross_entropy").result().metrics["token_count"] == 4

    sampler = client.create_sampling_client(base_model=TEXT_MODEL)
    prompt = image_datum(16, 16, 64, text + 64).model_input
    params = trio.SamplingParams(max_tokens=2)
    with pytest.raises(trio.PyTrioError) as refused:
        sampler.sample(prompt=prompt, num_samples=1, sampling_params=params).result()
    assert refused.value.code == "image_input_unsupported"
    assert not refused.value.retryable
