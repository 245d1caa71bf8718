"""Fine-tune a chat model on a few Q&A pairs, then sample from it.

Written the way an assistant with HuggingFace habits writes PyTRIO code: trio-lint reports the
pitfalls and `make demo` shows its findings and the diff of its safe fixes. This file is demo
material and is never run; examples/ holds the correct version.
"""

import pytrio as trio
from pytrio import SamplingParams
from transformers import AutoTokenizer

BASE_MODEL = "Qwen/Qwen3-4B-Instruct-2507"
PAIRS = [
    ("What is the capital of France?", "Paris."),
    ("What is 2 + 2?", "4."),
]

tokenizer = AutoTokenizer.from_pretrained(BASE_MODEL)
service = trio.ServiceClient()
training_client = service.create_lora_training_client(base_model=BASE_MODEL, rank=16)


def build_datum(question: str, answer: str) -> trio.Datum:
    prompt = tokenizer.encode(question)
    completion = tokenizer.encode(" " + answer)
    tokens = prompt + completion
    mask = [-100] * len(prompt) + [1.0] * len(completion)  # mask the prompt, HuggingFace style
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": tokens[1:], "weights": mask[1:]},
    )


batch = [build_datum(q, a) for q, a in PAIRS]
adam = trio.AdamParams(lr=1e-4, betas=(0.9, 0.95))

for step in range(10):
    loss = training_client.forward_backward(batch, "cross_entropy").metrics["loss"]
    training_client.optim_step(adam).result()
    print(f"step {step}: loss {loss:.3f}")

sampler = training_client.save_weights_and_get_sampling_client()
params = SamplingParams(max_new_tokens=32, temperature=0.0)
prompt = trio.ModelInput.from_ints(tokenizer.encode(PAIRS[0][0]))
response = sampler.sample(prompt, num_samples=1, sampling_params=params).result()
print(response.sequences[0].text)
