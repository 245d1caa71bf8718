"""Vision SFT: caption data built from PNG bytes with the chat template's image placeholder."""

import io

import pytrio as trio
from PIL import Image

service = trio.ServiceClient()
training = service.create_lora_training_client(base_model="Qwen/Qwen3-VL-8B-Instruct", rank=16)
tokenizer = training.get_tokenizer()


def png_bytes(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def encode_image(image: Image.Image) -> trio.ImageChunk:
    return trio.ImageChunk(data=png_bytes(image), format="png")  # bug: PTR312


def caption_datum(image: Image.Image, prompt: str, caption: str) -> trio.Datum:
    before, after = prompt.split("<image>")
    prompt_chunks = [
        trio.types.EncodedTextChunk(tokens=tokenizer.encode(before, add_special_tokens=False)),
        encode_image(image),
        trio.types.EncodedTextChunk(tokens=tokenizer.encode(after, add_special_tokens=False)),
    ]
    prompt_length = len(trio.ModelInput(chunks=prompt_chunks))
    completion = tokenizer.encode(caption, add_special_tokens=False)
    model_input = trio.ModelInput(
        chunks=[*prompt_chunks, trio.types.EncodedTextChunk(tokens=completion[:-1])]
    )
    targets = [0] * (prompt_length - 1) + completion
    weights = [0.0] * (prompt_length - 1) + [1.0] * len(completion)
    return trio.Datum(
        model_input=model_input, loss_fn_inputs={"target_tokens": targets, "weights": weights}
    )


def compare_datum(images: list[Image.Image], question: str, answer: list[int]) -> trio.Datum:
    sized = [
        trio.ImageChunk(data=png_bytes(image), format="png", expected_tokens=256)
        for image in images
    ]
    unsized = [trio.ImageChunk(data=png_bytes(image), format="png") for image in images]  # bug: PTR312
    text = trio.types.EncodedTextChunk(tokens=tokenizer.encode(question) + answer[:-1])
    labels = {"target_tokens": [0] * (256 * len(images)) + answer}
    trio.Datum(model_input=trio.ModelInput(chunks=[*sized, text]), loss_fn_inputs=labels)
    return trio.Datum(model_input=trio.ModelInput(chunks=[*unsized, text]), loss_fn_inputs=labels)


def describe(sampler: trio.SamplingClient, image: Image.Image, params: trio.SamplingParams):
    # Sampling measures the image on the service: no expected_tokens needed.
    prompt = trio.ModelInput(chunks=[encode_image(image)])
    return sampler.sample(prompt=prompt, num_samples=1, sampling_params=params).result()
