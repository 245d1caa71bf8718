"""A training script that must behave the same on pytrio 0.1 and 0.2 during an upgrade.

trio-lint-config: {"extend-select": ["PTR210"]}
"""

import pytrio as trio

service = trio.ServiceClient()
training = service.create_lora_training_client(  # bug: PTR210
    base_model="Qwen/Qwen3-4B-Instruct-2507",
    rank=32,
    train_unembed=False,
)
print(training.model_id)
