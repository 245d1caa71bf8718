"""Models, runs and checkpoints: the catalogue, the RestClient, download and delete.

Shows `get_supported_models()` and `get_server_capabilities()` (per-model limits), saving both
checkpoint kinds, and the RestClient of pytrio 0.2.9: sync methods return
`concurrent.futures.Future`s of pydantic models (call `.result()`, read attributes), listing runs
and checkpoints, downloading a checkpoint archive, and deleting a checkpoint.

Run offline:       trio-local run python examples/04_model_management.py
Run on PyTRIO:     python examples/04_model_management.py   (after `trio login`; it deletes only
                   the checkpoint it created)
"""

import argparse
import tempfile
from pathlib import Path

import pytrio as trio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-model", default="Qwen/Qwen3-4B-Instruct-2507")
    args = parser.parse_args()

    service = trio.ServiceClient()
    print(f"models {service.get_supported_models()}")
    for model in service.get_server_capabilities().supported_models:
        print(
            f"capability {model.model_name} train={model.training.available} "
            f"max_seq_len={model.training.max_seq_len} sample={model.sampling.available}"
        )

    # train_unembed=False keeps the adapter (and the download below) small
    training = service.create_lora_training_client(
        base_model=args.base_model, rank=8, train_unembed=False
    )
    run_id = training.training_run_cuid
    state = training.save_state("mgmt-demo-state").result()
    weights = training.save_weights_for_sampler("mgmt-demo-weights").result()
    print(f"run {run_id} state {state.path} weights {weights.path}")

    rest = service.create_rest_client()
    runs = rest.list_training_runs(limit=5).result()
    print(f"training runs total {runs.cursor.total_count}")
    run = rest.get_training_run(run_id).result()
    print(f"run {run.training_run_id} base {run.base_model} rank {run.lora_rank}")

    checkpoints = rest.list_checkpoints(run_id).result().checkpoints
    for checkpoint in checkpoints:
        print(
            f"checkpoint {checkpoint.checkpoint_type} {checkpoint.checkpoint_id} {checkpoint.path}"
        )
    sampler_checkpoint = next(c for c in checkpoints if c.checkpoint_type == "sampler")

    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "adapter.tar"
        download = rest.download_checkpoint(sampler_checkpoint.checkpoint_id, target).result()
        print(f"downloaded {download.bytes_written} bytes, on disk {target.stat().st_size}")

    state_checkpoint = next(c for c in checkpoints if c.checkpoint_type == "training")
    rest.delete_checkpoint(run_id, state_checkpoint.checkpoint_id).result()
    remaining = rest.list_checkpoints(run_id).result().checkpoints
    print(f"checkpoints before delete {len(checkpoints)} after {len(remaining)}")


if __name__ == "__main__":
    main()
