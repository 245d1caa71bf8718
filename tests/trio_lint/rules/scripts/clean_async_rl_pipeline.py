"""Async RL with pipelined submissions, a fixed reference sampler and a refreshed policy sampler;
plus asyncio code of other libraries (no finding expected)."""

import asyncio

import pytrio as trio


async def fetch_all(session, urls):
    responses = await asyncio.gather(*[session.get(url) for url in urls])
    return [await response.json() for response in responses]


async def rollouts(sampler: trio.SamplingClient, prompts, params):
    return await asyncio.gather(
        *[sampler.sample_async(prompt=p, num_samples=4, sampling_params=params) for p in prompts]
    )


async def rl(service: trio.ServiceClient, prompts, build_batch, steps=5):
    training = await service.create_lora_training_client_async(
        base_model="Qwen/Qwen3-4B-Instruct-2507", rank=16
    )
    ref_sampler = await training.save_weights_and_get_sampling_client_async()
    params = trio.SamplingParams(max_tokens=96, temperature=1.0)
    adam = trio.AdamParams(learning_rate=1e-5)
    for step in range(steps):
        policy = await training.save_weights_and_get_sampling_client_async()
        samples = await rollouts(policy, prompts, params)
        reference = await rollouts(ref_sampler, prompts, params)
        batch = build_batch(samples, reference)
        fb_future = await training.forward_backward_async(batch, "importance_sampling")
        optim_future = await training.optim_step_async(adam)
        result = await fb_future
        await optim_future
        print(step, result.metrics["loss_mean"])
    rest = service.create_rest_client()
    runs = await rest.list_training_runs_async()
    return [run.training_run_id for run in runs.training_runs]
