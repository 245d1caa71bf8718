"""Save, sample and export: 0.1 call shapes that 0.2 changed."""

import pytrio as trio

service = trio.ServiceClient()
training = service.create_lora_training_client(base_model="Qwen/Qwen3-4B-Instruct-2507")
rest = service.create_rest_client()

sampler = training.save_weights_and_get_sampling_client("after-epoch-1")  # bug: PTR005
checkpoints = rest.list_user_checkpoints().result().checkpoints
latest = checkpoints[0]
archive = rest.get_checkpoint_archive_url(training.training_run_cuid, latest.checkpoint_id)  # bug: PTR005
print(archive.result().url)
