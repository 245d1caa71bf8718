"""Fine-tune the base checkpoint used in a transformers notebook.

trio-lint-config: {"trainable-models": ["Qwen/Qwen3-4B-Instruct-2507", "Qwen/Qwen3-8B"]}
"""

import pytrio as trio

MODEL_ID = "Qwen/Qwen3-4B"

service = trio.ServiceClient()
training = service.create_lora_training_client(base_model=MODEL_ID, rank=16)  # bug: PTR402
sampler = service.create_sampling_client(base_model=MODEL_ID)
print(training.model_id, sampler.model_id)
