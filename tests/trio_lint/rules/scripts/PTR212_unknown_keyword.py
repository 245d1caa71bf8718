"""Configure the SDK and sample several answers, with option names guessed from other libraries."""

import pytrio as trio

trio.configure(request_timeout=600, log_level="INFO")  # bug: PTR212
service = trio.ServiceClient()
training = service.create_lora_training_client(
    base_model="Qwen/Qwen3-4B-Instruct-2507",
    rank=16,
    lora_alpha=32,  # bug: PTR212
)
sampler = training.save_weights_and_get_sampling_client()
tokenizer = sampler.get_tokenizer()
prompt = trio.ModelInput.from_ints(tokenizer.encode("Write a haiku about the sea."))
params = trio.SamplingParams(max_tokens=64, temperature=0.7)
response = sampler.sample(prompt, sampling_params=params, n=4).result()  # bug: PTR212
for sequence in response.sequences:
    print(sequence.text)
