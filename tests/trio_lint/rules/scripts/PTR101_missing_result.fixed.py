"""SFT loop that reads the loss straight off the call, like `trainer.train()` returns metrics."""

import pytrio as trio

service = trio.ServiceClient()
training = service.create_lora_training_client(base_model="Qwen/Qwen3-4B-Instruct-2507", rank=16)
adam = trio.AdamParams(learning_rate=1e-4)


def run_epoch(batches):
    losses = []
    for batch in batches:
        loss = training.forward_backward(batch, "cross_entropy").result().metrics["loss_mean"]  # bug: PTR101
        step = training.optim_step(adam)
        losses.append(loss)
        print("lr applied:", step.metrics)  # bug: PTR101
    return sum(losses) / len(losses)


saved = training.save_weights_for_sampler("epoch-1")
print("weights at", saved.path)  # bug: PTR101
