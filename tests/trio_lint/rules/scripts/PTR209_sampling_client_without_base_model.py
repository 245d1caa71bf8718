"""Reload a finished adapter for inference in a separate script."""

import sys

import pytrio as trio

service = trio.ServiceClient()
adapter_path = sys.argv[1]
sampler = service.create_sampling_client(model_path=adapter_path)  # bug: PTR209
tokenizer = sampler.get_tokenizer()
prompt = trio.ModelInput.from_ints(tokenizer.encode("Summarise LoRA in one line."))
params = trio.SamplingParams(max_tokens=64)
print(sampler.sample(prompt=prompt, sampling_params=params).result().sequences[0].text)
