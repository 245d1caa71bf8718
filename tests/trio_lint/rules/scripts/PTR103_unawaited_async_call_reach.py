"""An async step that starts its requests early and reads them without awaiting."""

import pytrio as trio


async def step(training: trio.TrainingClient, batch):
    pending = training.forward_backward_async(batch, "cross_entropy")
    await prepare_next_batch()
    return pending.result().metrics  # bug: PTR103


async def texts(sampler: trio.SamplingClient, prompt, params):
    response = sampler.sample_async(prompt, 2, params)
    return [sequence.text for sequence in response.sequences]  # bug: PTR103


async def prepare_next_batch():
    return None
