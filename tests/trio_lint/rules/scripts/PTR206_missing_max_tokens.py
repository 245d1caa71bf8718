"""Quick smoke test of a trained adapter: sample with default settings."""

import pytrio as trio

service = trio.ServiceClient()
training = service.create_lora_training_client(base_model="Qwen/Qwen3-4B-Instruct-2507")
sampler = training.save_weights_and_get_sampling_client()
tokenizer = sampler.get_tokenizer()
prompt = trio.ModelInput.from_ints(tokenizer.encode("Say hello."))

first = sampler.sample(prompt=prompt, num_samples=2).result()  # bug: PTR206
creative = trio.SamplingParams(temperature=1.2, top_p=0.9)  # bug: PTR206
second = sampler.sample(prompt=prompt, num_samples=2, sampling_params=creative).result()
print(first.sequences[0].text, second.sequences[0].text)
