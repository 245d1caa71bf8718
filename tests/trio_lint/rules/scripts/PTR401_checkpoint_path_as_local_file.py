"""Export the trained adapter to disk for a local peft model."""

import os

import torch

import pytrio as trio

service = trio.ServiceClient()
training = service.create_lora_training_client(base_model="Qwen/Qwen3-4B-Instruct-2507")
saved = training.save_weights_for_sampler("export").result()
if os.path.exists(saved.path):  # bug: PTR401
    state = torch.load(os.path.join(saved.path, "adapter_model.bin"))  # bug: PTR401
    print(len(state), "tensors")
