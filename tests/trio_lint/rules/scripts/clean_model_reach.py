"""Correct code of the same shapes: responses, coroutines, metrics and prompts bound in other
functions and methods, used the right way."""

import asyncio

import pytrio as trio


def encode_prompt(tokenizer, question: str) -> trio.ModelInput:
    return trio.ModelInput.from_ints(tokenizer.encode(f"Question: {question}\nAnswer:"))


def train_step(training: trio.TrainingClient, batch):
    result = training.forward_backward(batch, "cross_entropy").result()
    training.optim_step(trio.AdamParams(learning_rate=1e-4)).result()
    return result.metrics


class Agent:
    def __init__(self, sampler: trio.SamplingClient, tokenizer, system: str):
        self.sampler = sampler
        self.tokenizer = tokenizer
        self.prefix = trio.ModelInput.from_ints(tokenizer.encode(system))

    def greet(self, params):
        self.last = self.sampler.sample(self.prefix, 1, params).result()

    def texts(self):
        return [sequence.text for sequence in self.last.sequences]

    def answer(self, question: str, params):
        prompt = encode_prompt(self.tokenizer, question)
        return self.sampler.sample(prompt=prompt, num_samples=1, sampling_params=params)


async def step(training: trio.TrainingClient, batch):
    pending = training.forward_backward_async(batch, "cross_entropy")
    others = [training.optim_step_async(trio.AdamParams()) for _ in range(1)]
    result = await (await pending)
    await asyncio.gather(*others)
    return result.metrics


def train(training: trio.TrainingClient, batches):
    for batch in batches:
        metrics = train_step(training, batch)
        print("loss", metrics.get("loss_sum"), metrics["loss_sum"])
