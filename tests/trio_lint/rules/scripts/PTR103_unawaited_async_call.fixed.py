"""Async RL rollout: the coroutines are created but never awaited."""

import asyncio

import pytrio as trio


async def rollout(sampler: trio.SamplingClient, prompts, params):
    for prompt in prompts:
        await sampler.sample_async(prompt=prompt, num_samples=4, sampling_params=params)  # bug: PTR103


async def update(training: trio.TrainingClient, batch):
    await (await training.forward_backward_async(batch, "importance_sampling"))  # bug: PTR103
    fut = training.optim_step_async(trio.AdamParams(learning_rate=1e-5)).result()  # bug: PTR103
    return fut


async def main():
    service = trio.ServiceClient()
    training = await service.create_lora_training_client_async(base_model="Qwen/Qwen3-4B-Instruct-2507")
    await asyncio.gather(rollout(None, [], None), update(training, []))


asyncio.run(main())
