"""Save checkpoints under names built like output directories."""

import pytrio as trio

service = trio.ServiceClient()
training = service.create_lora_training_client(base_model="Qwen/Qwen3-4B-Instruct-2507")
for epoch in range(2):
    training.save_state(f"checkpoints/epoch_{epoch}").result()  # bug: PTR208
training.save_state("final model").result()  # bug: PTR208
saved = training.save_weights_for_sampler("run:final").result()  # bug: PTR208
print(saved.path)
