"""Sweep LoRA ranks like a peft LoraConfig(r=...) sweep."""

import pytrio as trio

service = trio.ServiceClient()
BASE = "Qwen/Qwen3-4B-Instruct-2507"

small = service.create_lora_training_client(base_model=BASE, rank=8)
large = service.create_lora_training_client(base_model=BASE, rank=128)  # bug: PTR207
tiny = service.create_lora_training_client(BASE, 2)  # bug: PTR207
print(small.model_id, large.model_id, tiny.model_id)
