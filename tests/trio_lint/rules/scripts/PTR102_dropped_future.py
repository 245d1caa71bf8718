"""Gradient-accumulation loop in the PyTorch habit: loss.backward(); optimizer.step()."""

import pytrio as trio

service = trio.ServiceClient()
training = service.create_lora_training_client(base_model="Qwen/Qwen3-4B-Instruct-2507")
adam = trio.AdamParams(learning_rate=2e-4)
micro_batches = [[], [], [], []]

for epoch in range(3):
    for micro in micro_batches:
        training.forward_backward(micro, "cross_entropy")  # bug: PTR102
    training.optim_step(adam)  # bug: PTR102
    training.save_state(f"epoch-{epoch}")  # bug: PTR102
    print(f"epoch {epoch} done")
