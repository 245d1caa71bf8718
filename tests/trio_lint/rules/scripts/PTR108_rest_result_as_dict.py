"""Clean up old checkpoints: the RestClient results read as 0.1 dicts."""

import pytrio as trio

service = trio.ServiceClient()
rest = service.create_rest_client()

runs = rest.list_training_runs(limit=50).result()["training_runs"]  # bug: PTR108
for run in runs:
    listing = rest.list_checkpoints(run["training_run_id"]).result()
    print(run["training_run_id"], listing["total"])  # bug: PTR108
    for ckpt in listing.checkpoints[:-3]:
        rest.delete_checkpoint(run["training_run_id"], ckpt.checkpoint_id).result()
