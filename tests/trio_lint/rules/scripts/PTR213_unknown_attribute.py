"""Sample from a base model and log the answers, with method names from other SDKs."""

import pytrio as trio

service = trio.ServiceClient()
sampler = service.create_sampling_client(base_model="Qwen/Qwen3-4B-Instruct-2507")
tokenizer = sampler.get_tokenizer()


def answer(client: trio.SamplingClient, question: str) -> str:
    prompt = trio.ModelInput.from_ints(tokenizer.encode(question))
    params = trio.SamplingParams(max_tokens=128)
    response = client.sample(prompt, sampling_params=params).result()
    return response.text  # bug: PTR213


def stream(client: trio.SamplingClient, question: str) -> None:
    prompt = trio.ModelInput.from_ints(tokenizer.encode(question))
    for chunk in client.generate_stream(prompt):  # bug: PTR213
        print(chunk)


def log(response: object) -> None:
    if isinstance(response, trio.types.SampleOutput):  # bug: PTR213
        print(response)


print(answer(sampler, "What is LoRA?"))
