"""Generate answers after training, with transformers' generate() keyword habits."""

import pytrio as trio

service = trio.ServiceClient()
sampler = service.create_sampling_client(base_model="Qwen/Qwen3-4B-Instruct-2507")
tokenizer = sampler.get_tokenizer()

questions = ["What is LoRA?", "Why shift targets by one?"]
params = trio.SamplingParams(max_new_tokens=256, temperature=0.7, top_p=0.95)  # bug: PTR201
for question in questions:
    prompt = trio.ModelInput.from_ints(tokenizer.encode(question))
    result = sampler.sample(prompt=prompt, num_samples=1, sampling_params=params).result()
    print(question, "->", result.sequences[0].text)
