"""Resume a LoRA run and sample long answers: the 0.1 way, run on 0.2."""

import pytrio as trio

trio.configure(timeout=600, sampling_timeout=900)  # bug: PTR004, PTR004
service = trio.ServiceClient()
training = service.create_lora_training_client(
    base_model="Qwen/Qwen3-4B-Instruct-2507",
    rank=32,
    lora_path="trio://runs/abc/checkpoints/step-100",  # bug: PTR004
)
sampler = training.save_weights_and_get_sampling_client()
tokenizer = sampler.get_tokenizer()
params = trio.SamplingParams(max_tokens=512, temperature=0.7, ignore_eos=False)  # bug: PTR004
prompt = trio.ModelInput.from_ints(tokenizer.encode("Write a haiku about the sea."))
response = sampler.sample(prompt=prompt, num_samples=1, sampling_params=params).result()
print(response.sequences[0].text)
