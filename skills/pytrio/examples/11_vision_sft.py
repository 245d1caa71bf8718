"""Fine-tune on an image prompt with PyTRIO: a generated PNG, expected_tokens, 10 steps, a sample.

Shows the whole image recipe for pytrio 0.2.9:
- picking a model that takes images: the catalogue has no modality field, so the model family
  (from the id) decides, with the image processor settings each family publishes;
- `expected_tokens`, the number of positions the image occupies, computed from the image size
  with that processor's arithmetic (resize into the pixel bounds, patches, merges);
- the chat template writes `<|vision_start|><|image_pad|><|vision_end|>` for an image; the
  `trio.ImageChunk` takes the place of `<|image_pad|>` between the two text chunks;
- one datum per example: targets and weights have one entry per position, image included
  (target -100 on the image, weight 0 on the prompt, 1 on the answer);
- sampling with the same prompt; `compute_logprobs` refuses image prompts.

Run offline:       trio-local run python examples/11_vision_sft.py
Run on PyTRIO:     python examples/11_vision_sft.py --lr 1e-4 --steps 40   (after `trio login`)

The PNG is drawn here (a coloured square, no file is read or downloaded).
"""

import argparse
import math
import struct
import zlib

import pytrio as trio

# The image processors of the model families that take images: (patch_size, merge_size,
# min_pixels, max_pixels) from each family's public preprocessor_config.json (e.g.
# huggingface.co/Qwen/Qwen3.5-9B and huggingface.co/Qwen/Qwen3-VL-8B-Instruct). Families not
# listed (Qwen3, Qwen2.5 text models) are text-only.
VISION_FAMILIES = {
    "qwen3-vl-": (16, 2, 65_536, 16_777_216),
    "qwen3.5-": (16, 2, 65_536, 16_777_216),
    "qwen3.6-": (16, 2, 65_536, 16_777_216),
    "qwen2.5-vl-": (14, 2, 3_136, 12_845_056),
    "qwen2-vl-": (14, 2, 3_136, 12_845_056),
}
EXAMPLES = [((200, 30, 30), "red"), ((30, 60, 220), "blue")]
QUESTION = "What colour is the square? Answer in one word."


def image_processor(model_id: str) -> tuple[int, int, int, int] | None:
    """The processor settings of `model_id`'s family, or None for a text-only model."""
    name = model_id.rsplit("/", 1)[-1].lower()
    for prefix, settings in VISION_FAMILIES.items():
        if name.startswith(prefix):
            return settings
    return None


def expected_tokens(model_id: str, width: int, height: int) -> int:
    """Positions a width x height image occupies: transformers' smart_resize, then one token
    per merge_size x merge_size patches."""
    settings = image_processor(model_id)
    if settings is None:
        raise ValueError(f"{model_id} is a text-only model")
    patch, merge, min_pixels, max_pixels = settings
    factor = patch * merge
    h, w = round(height / factor) * factor, round(width / factor) * factor
    if h * w > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h = max(factor, math.floor(height / beta / factor) * factor)
        w = max(factor, math.floor(width / beta / factor) * factor)
    elif h * w < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h = math.ceil(height * beta / factor) * factor
        w = math.ceil(width * beta / factor) * factor
    return (h // patch) * (w // patch) // (merge * merge)


def png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A solid-colour RGB PNG (8 bits per channel), written with the standard library."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    row = b"\x00" + bytes(rgb) * width  # filter type 0, then the pixels
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )


def prompt_around_image(tokenizer, question: str) -> tuple[list[int], list[int]]:
    """The chat prompt's tokens before and after the image: the template writes
    <|vision_start|><|image_pad|><|vision_end|>, and the ImageChunk replaces <|image_pad|>."""
    messages = [
        {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": question}]}
    ]
    text = tokenizer.apply_chat_template(
        messages, tokenize=False, add_generation_prompt=True, enable_thinking=False
    )
    before, placeholder, after = text.partition("<|image_pad|>")
    if not placeholder or not before.endswith("<|vision_start|>"):
        raise ValueError("this chat template writes no image placeholder: not a vision model")
    return (
        tokenizer.encode(before, add_special_tokens=False),
        tokenizer.encode(after, add_special_tokens=False),
    )


def image_prompt(before: list[int], image: trio.ImageChunk, after: list[int]) -> trio.ModelInput:
    return trio.ModelInput(
        chunks=[
            trio.types.EncodedTextChunk(tokens=before),
            image,
            trio.types.EncodedTextChunk(tokens=after),
        ]
    )


def image_datum(tokenizer, before, image: trio.ImageChunk, after, answer: str) -> trio.Datum:
    """One training example. The whole sequence has the image as expected_tokens positions
    (-100 in the targets: nothing to predict there); the usual shift by one follows."""
    answer_ids = [*tokenizer.encode(answer, add_special_tokens=False), tokenizer.eos_token_id]
    tokens = before + [-100] * image.expected_tokens + after + answer_ids  # -100: no target
    weights = [0.0] * (len(tokens) - len(answer_ids)) + [1.0] * len(answer_ids)
    model_input = image_prompt(before, image, (after + answer_ids)[:-1])  # input: tokens[:-1]
    return trio.Datum(
        model_input=model_input,
        loss_fn_inputs={"target_tokens": tokens[1:], "weights": weights[1:]},
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-model", help="default: the first served id that takes images")
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--height", type=int, default=48)
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--lr", type=float, default=5e-3)
    args = parser.parse_args()

    service = trio.ServiceClient()
    models = service.get_supported_models()
    vision = [model for model in models if image_processor(model) is not None]
    base_model = args.base_model or next(iter(vision), None)
    if base_model is None or base_model not in vision:
        raise SystemExit(f"{base_model} takes no images here; models that do: {vision}")
    training = service.create_lora_training_client(base_model=base_model, rank=args.rank)
    tokenizer = training.get_tokenizer()

    count = expected_tokens(base_model, args.width, args.height)
    print(f"model {base_model} image {args.width}x{args.height} expected_tokens {count}")
    before, after = prompt_around_image(tokenizer, QUESTION)
    images = [
        trio.ImageChunk(data=png(args.width, args.height, rgb), format="png", expected_tokens=count)
        for rgb, _ in EXAMPLES
    ]
    batch = [
        image_datum(tokenizer, before, image, after, answer)
        for image, (_, answer) in zip(images, EXAMPLES, strict=True)
    ]
    prompt_length = image_prompt(before, images[0], after).length  # needs expected_tokens
    print(f"prompt length {prompt_length} (text {len(before) + len(after)} + image)")

    adam = trio.AdamParams(learning_rate=args.lr)
    for step in range(args.steps):
        fb_future = training.forward_backward(batch, loss_fn="cross_entropy")
        optim_future = training.optim_step(adam)
        metrics = fb_future.result().metrics
        optim_future.result()
        print(f"step {step} loss {metrics['loss_mean']:.4f}")

    sampler = training.save_weights_and_get_sampling_client()
    params = trio.SamplingParams(max_tokens=8, temperature=0.0, stop=[tokenizer.eos_token_id])
    for image, (_, answer) in zip(images, EXAMPLES, strict=True):
        prompt = image_prompt(before, image, after)
        sequence = sampler.sample(prompt=prompt, num_samples=1, sampling_params=params).result()
        print(f"sample -> {sequence.sequences[0].text!r} (trained {answer!r})")
    try:
        sampler.compute_logprobs(image_prompt(before, images[0], after)).result()
    except trio.PyTrioError as err:
        print(f"compute_logprobs with an image: {err.code}")


if __name__ == "__main__":
    main()
