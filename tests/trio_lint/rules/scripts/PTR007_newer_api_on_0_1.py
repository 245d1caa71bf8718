"""A script meant to keep running on a pytrio 0.1 pin.

trio-lint-config: {"target-version": "0.1"}
"""

import pytrio as trio

service = trio.ServiceClient()
training = service.create_lora_training_client(base_model="Qwen/Qwen3-4B-Instruct-2507")
adam = trio.AdamParams(learning_rate=1e-4, grad_clip_norm=1.0)  # bug: PTR007

try:
    training.load_state("trio://runs/abc/step-100").result()  # bug: PTR007
except trio.PyTrioError as err:  # bug: PTR007
    print("starting fresh:", err)

for batch in []:
    training.forward_backward(batch, "cross_entropy").result()
    training.optim_step(adam).result()
training.save_state("final", ttl_seconds=86400).result()  # bug: PTR007
