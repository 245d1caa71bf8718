"""A FastAPI-style async handler that trains with the blocking API."""

from fastapi import FastAPI

import pytrio as trio

app = FastAPI()
service = trio.ServiceClient()


@app.post("/train")
async def train_request(base_model: str, batches, lr: float):
    training = await service.create_lora_training_client_async(base_model=base_model)  # bug: PTR105
    adam = trio.AdamParams(learning_rate=lr)
    history = []
    for batch in batches:
        fb = await training.forward_backward_async(batch, "cross_entropy")  # bug: PTR105
        await (await training.optim_step_async(adam))  # bug: PTR105
        history.append((await fb).metrics["loss_mean"])
    return history
