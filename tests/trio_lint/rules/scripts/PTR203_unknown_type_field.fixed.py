"""AdamW and generation settings copied from a PyTorch / transformers config."""

import pytrio as trio

config = {"lr": 2e-4, "betas": (0.9, 0.999), "eps": 1e-8}

adam = trio.AdamParams(
    learning_rate=config["lr"],
    betas=config["betas"],  # bug: PTR203
    eps=config["eps"],  # bug: PTR203
)
sampling = trio.SamplingParams(
    max_tokens=200,
    do_sample=True,  # bug: PTR203
    repetition_penalty=1.1,  # bug: PTR203
)
print(adam, sampling)
