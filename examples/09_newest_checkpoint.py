"""Checkpoint housekeeping: find the newest checkpoint, resume from it, download it, clean up.

Shows what the RestClient of pytrio 0.2.9 gives you and what it does not:
- no call returns runs or checkpoints "newest first": the SDK sends no sort order, and
  `TrainingRun` carries no creation time. Page through every run, list its checkpoints, and
  compare `Checkpoint.time` (a timezone-aware `datetime`);
- a checkpoint has no name field: the name given to `save_state(name)` is only part of the
  opaque `path` the service builds. `checkpoint_id` is what RestClient calls take; `path` is
  what `create_training_client_from_state*`, `load_state*` and `create_sampling_client` take;
- names are unique per training run: a second `save_state("step-10")` in the same run fails
  unless `overwrite=True`, while a re-run of the script is a new run, so its `step-10` is a new
  checkpoint with a new path;
- `download_checkpoint(checkpoint_id, destination)` writes ONE file (an archive) at
  `destination`, creating missing parent folders; a directory as destination fails.

Run offline:       trio-local run python examples/09_newest_checkpoint.py
Run on PyTRIO:     python examples/09_newest_checkpoint.py   (after `trio login`; it deletes
                   only the checkpoints it created)
"""

import argparse
import tarfile
import tempfile
from pathlib import Path

import pytrio as trio


def all_training_runs(rest: trio.RestClient) -> list:
    """Every training run of the workspace, one page after the other (order unspecified)."""
    runs, offset = [], 0
    while True:
        page = rest.list_training_runs(limit=100, offset=offset).result()
        runs.extend(page.training_runs)
        offset += len(page.training_runs)
        if not page.training_runs or offset >= page.cursor.total_count:
            return runs


def is_temporary(checkpoint) -> bool:
    """The weights `save_weights_and_get_sampling_client()` saved (6 h TTL), not a named save."""
    name = checkpoint.path.rstrip("/").rsplit("/", 1)[-1]
    return checkpoint.expires_at is not None and name.startswith("temp-sampling-")


def newest_checkpoint(rest: trio.RestClient, checkpoint_type: str = "training"):
    """(training_run_id, Checkpoint) of the most recently saved checkpoint of this type."""
    newest = None
    for run in all_training_runs(rest):
        for checkpoint in rest.list_checkpoints(run.training_run_id).result().checkpoints:
            if checkpoint.checkpoint_type != checkpoint_type or is_temporary(checkpoint):
                continue
            if newest is None or checkpoint.time > newest[1].time:
                newest = (run.training_run_id, checkpoint)
    return newest


def one_step(training: trio.TrainingClient) -> float:
    tokens = training.get_tokenizer().encode("Checkpoints are saved by name within a run.")
    datum = trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": tokens[1:]},
    )
    fb_future = training.forward_backward([datum], "cross_entropy")
    optim_future = training.optim_step(trio.AdamParams(learning_rate=1e-4))
    loss = fb_future.result().metrics["loss_mean"]
    optim_future.result()
    return loss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-model", default="Qwen/Qwen3-4B-Instruct-2507")
    args = parser.parse_args()

    service = trio.ServiceClient()
    rest = service.create_rest_client()
    created = []  # (training_run_id, checkpoint path) this script saved, deleted at the end

    # The same script run twice: two training runs, each saving "step-10".
    paths = []
    for attempt in range(2):
        # train_unembed=False keeps the adapter (and the download below) small
        training = service.create_lora_training_client(
            base_model=args.base_model, rank=8, train_unembed=False
        )
        one_step(training)
        saved = training.save_state("step-10").result()
        paths.append(saved.path)
        created.append((training.training_run_cuid, saved.path))
        print(f"attempt {attempt} run {training.training_run_cuid} saved {saved.path}")
    print(f"same name in two runs gives two checkpoints: {paths[0] != paths[1]}")

    # The same name twice in ONE run: refused unless overwrite=True (save_state only).
    try:
        training.save_state("step-10").result()
        print("duplicate name accepted")
    except trio.PyTrioError as err:
        print(f"duplicate name refused: {type(err).__name__} code {err.code}")
    replaced = training.save_state("step-10", overwrite=True).result()
    print(f"overwrite keeps the path: {replaced.path == paths[1]}")
    weights = training.save_weights_for_sampler("step-10").result()  # the other kind: its own path
    created.append((training.training_run_cuid, weights.path))
    print(f"a sampler checkpoint may share the name: {weights.path not in paths}")

    run_id, checkpoint = newest_checkpoint(rest)
    print(f"newest checkpoint {checkpoint.path} of run {run_id}")
    print(f"newest is the last save: {checkpoint.path == paths[1]}")
    print(f"checkpoint fields {sorted(type(checkpoint).model_fields)}")
    print(f"time is {type(checkpoint.time).__name__} tz {checkpoint.time.tzinfo is not None}")

    resumed = service.create_training_client_from_state_with_optimizer(checkpoint.path)
    print(f"resumed from the newest checkpoint, loss {one_step(resumed):.4f}")

    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "not" / "yet" / "there" / "step-10.tar"
        download = rest.download_checkpoint(checkpoint.checkpoint_id, target).result()
        print(f"download wrote one file {Path(download.path) == target} {download.bytes_written}")
        if tarfile.is_tarfile(target):  # trio-local serves a tar; see references/rest-client.md
            with tarfile.open(target) as archive:
                print(f"archive members {sorted(archive.getnames())}")
        try:
            rest.download_checkpoint(checkpoint.checkpoint_id, tmp).result()
        except IsADirectoryError:
            print("a directory as destination fails: IsADirectoryError")

    try:  # the path where a checkpoint_id belongs: the service answers 404
        rest.get_checkpoint_archive_url(checkpoint.path).result()
    except trio.PyTrioError as err:
        print(f"path as checkpoint_id refused: code {err.code} status {err.status_code}")

    try:  # and the id where a path belongs
        service.create_training_client_from_state(checkpoint.checkpoint_id)
    except trio.PyTrioError as err:
        print(f"checkpoint_id as path refused: {type(err).__name__}")

    # Housekeeping: delete by (training_run_id, checkpoint_id), never by path.
    for created_run, path in created:
        for item in rest.list_checkpoints(created_run).result().checkpoints:
            if item.path == path:
                rest.delete_checkpoint(created_run, item.checkpoint_id).result()
    print(f"deleted the {len(created)} checkpoints this script saved")


if __name__ == "__main__":
    main()
