"""Trying to overlap forward-backward and the optimizer step with asyncio.gather."""

import asyncio

import pytrio as trio


async def train_step(training: trio.TrainingClient, batch, adam):
    fb_future, optim_future = await asyncio.gather(  # bug: PTR107
        training.forward_backward_async(batch, "cross_entropy"),
        training.optim_step_async(adam),
    )
    result = await fb_future
    await optim_future
    return result.metrics["loss_mean"]
