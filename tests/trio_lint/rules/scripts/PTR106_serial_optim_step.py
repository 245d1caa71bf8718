"""Async SFT loop that waits for every forward-backward before submitting the step."""

import pytrio as trio


async def train(training: trio.TrainingClient, batches, lr=1e-4):
    adam = trio.AdamParams(learning_rate=lr)
    for step, batch in enumerate(batches):
        fb_future = await training.forward_backward_async(batch, "cross_entropy")
        result = await fb_future  # bug: PTR106
        print(f"step {step}: loss {result.metrics['loss_mean']:.4f}")
        optim_future = await training.optim_step_async(adam)
        await optim_future
