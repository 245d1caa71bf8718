"""Images: which model families take them and how many positions an image occupies.

pytrio 0.2.9 carries an image as `trio.ImageChunk(data, format, expected_tokens)` and never
says which models accept one (`SupportedModel` has no modality field) nor how many tokens an
image becomes. Both are properties of the model, published with it: a vision model ships a
`preprocessor_config.json` (patch size, merge size, pixel bounds) that transformers' image
processor applies (`smart_resize`, then one token per `merge_size x merge_size` patches). The
values below are copied from those public files, named in `source`; tests/pytrio_facts checks the
arithmetic against transformers' own `smart_resize` and the SDK facts against the wheel.

Pure data and arithmetic: importing this module imports nothing else.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

# transformers' smart_resize refuses images whose long side is more than 200 times the short one
# (transformers/models/qwen2_vl/image_processing_qwen2_vl.py).
MAX_ASPECT_RATIO = 200
IMAGE_FORMATS = ("png", "jpeg")  # pytrio 0.2.9 ImageChunk.format: Literal["png", "jpeg"]

# The chat-format tokens around an image in every Qwen vision template: the template writes
# VISION_START + IMAGE_PAD + VISION_END for an image part, and the processor repeats IMAGE_PAD
# once per image token. With PyTRIO the ImageChunk takes the place of that run of IMAGE_PAD.
VISION_START = "<|vision_start|>"
VISION_END = "<|vision_end|>"
IMAGE_PAD = "<|image_pad|>"


@dataclass(frozen=True)
class ImageProcessor:
    """A Qwen-VL image processor's sizing settings (`preprocessor_config.json`)."""

    patch_size: int
    merge_size: int
    min_pixels: int  # `size.shortest_edge` (older files: `min_pixels`)
    max_pixels: int  # `size.longest_edge` (older files: `max_pixels`)

    @property
    def factor(self) -> int:
        """Both sides of the resized image are multiples of this."""
        return self.patch_size * self.merge_size

    def resized(self, height: int, width: int) -> tuple[int, int]:
        """(height, width) after the processor's resize: transformers' `smart_resize`."""
        if height <= 0 or width <= 0:
            raise ValueError(f"image size must be positive, got {width}x{height}")
        if max(height, width) / min(height, width) > MAX_ASPECT_RATIO:
            raise ValueError(
                f"absolute aspect ratio must be smaller than {MAX_ASPECT_RATIO}, got "
                f"{max(height, width) / min(height, width)}"
            )
        factor = self.factor
        # Python's round() (half to even), as transformers uses it.
        h_bar = round(height / factor) * factor
        w_bar = round(width / factor) * factor
        if h_bar * w_bar > self.max_pixels:
            beta = math.sqrt((height * width) / self.max_pixels)
            h_bar = max(factor, math.floor(height / beta / factor) * factor)
            w_bar = max(factor, math.floor(width / beta / factor) * factor)
        elif h_bar * w_bar < self.min_pixels:
            beta = math.sqrt(self.min_pixels / (height * width))
            h_bar = math.ceil(height * beta / factor) * factor
            w_bar = math.ceil(width * beta / factor) * factor
        return h_bar, w_bar

    def tokens(self, height: int, width: int) -> int:
        """Positions the image occupies in the model input: patches / merge_size**2."""
        resized_height, resized_width = self.resized(height, width)
        patches = (resized_height // self.patch_size) * (resized_width // self.patch_size)
        return patches // (self.merge_size * self.merge_size)


@dataclass(frozen=True)
class ModelFamily:
    """A family of model ids, recognised by name; `processor` None means text only."""

    name: str
    pattern: str  # a regex matched (case-insensitively) at the start of the name after "Org/"
    processor: ImageProcessor | None
    source: str  # the public file the settings (or the absence of a vision tower) come from


# Qwen3-VL and Qwen3.5/Qwen3.6 share one processor: Qwen3VLProcessor with patch 16, merge 2.
_QWEN3_VL = ImageProcessor(patch_size=16, merge_size=2, min_pixels=65_536, max_pixels=16_777_216)
_QWEN2_VL = ImageProcessor(patch_size=14, merge_size=2, min_pixels=3_136, max_pixels=12_845_056)

# Most specific first: "Qwen3-VL-8B" must not fall through to the text-only "Qwen3" entry.
MODEL_FAMILIES: tuple[ModelFamily, ...] = (
    ModelFamily(
        "Qwen3-VL",
        r"qwen3-vl-",
        _QWEN3_VL,
        "https://huggingface.co/Qwen/Qwen3-VL-8B-Instruct/blob/main/preprocessor_config.json",
    ),
    ModelFamily(
        "Qwen3.5",
        r"qwen3\.5-",
        _QWEN3_VL,
        "https://huggingface.co/Qwen/Qwen3.5-9B/blob/main/preprocessor_config.json",
    ),
    ModelFamily(
        "Qwen3.6",
        r"qwen3\.6-",
        _QWEN3_VL,
        "https://huggingface.co/Qwen/Qwen3.6-27B/blob/main/preprocessor_config.json",
    ),
    ModelFamily(
        "Qwen2.5-VL",
        r"qwen2\.5-vl-",
        _QWEN2_VL,
        "https://huggingface.co/Qwen/Qwen2.5-VL-7B-Instruct/blob/main/preprocessor_config.json",
    ),
    ModelFamily(
        "Qwen2-VL",
        r"qwen2-vl-",
        _QWEN2_VL,
        "https://huggingface.co/Qwen/Qwen2-VL-7B-Instruct/blob/main/preprocessor_config.json",
    ),
    # Text-only: the config declares a causal LM (Qwen3ForCausalLM / Qwen3MoeForCausalLM,
    # Qwen2ForCausalLM) with no vision_config, and the repository has no preprocessor_config.json.
    ModelFamily(
        "Qwen3",
        r"qwen3-(?!omni)",  # Qwen3-Omni hears and sees: a family of its own, not listed here
        None,
        "https://huggingface.co/Qwen/Qwen3-4B-Instruct-2507/blob/main/config.json",
    ),
    ModelFamily(
        "Qwen2.5",
        r"qwen2\.5-",
        None,
        "https://huggingface.co/Qwen/Qwen2.5-7B-Instruct/blob/main/config.json",
    ),
)


def family_of(model_id: str) -> ModelFamily | None:
    """The family of `model_id` ("Org/Name" or "Name"), or None when this table has none."""
    name = model_id.strip().rsplit("/", 1)[-1]
    for family in MODEL_FAMILIES:
        if re.match(family.pattern, name, re.IGNORECASE):
            return family
    return None


def takes_images(model_id: str) -> bool:
    family = family_of(model_id)
    return family is not None and family.processor is not None


def image_tokens(model_id: str, width: int, height: int) -> int:
    """The positions a `width` x `height` image occupies for `model_id` (its `expected_tokens`).

    Raises ValueError for a model this table does not list as taking images.
    """
    family = family_of(model_id)
    if family is None or family.processor is None:
        kind = "a text-only model" if family else "not a model family with a known processor"
        raise ValueError(f"{model_id!r} is {kind}; it takes no image chunks")
    return family.processor.tokens(height, width)
