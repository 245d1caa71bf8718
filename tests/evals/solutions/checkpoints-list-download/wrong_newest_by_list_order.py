"""Save a run's state twice, list its checkpoints, download the newest by time."""

from pathlib import Path

import pytrio as trio


def main() -> None:
    service = trio.ServiceClient()
    training = service.create_lora_training_client(
        base_model="Qwen/Qwen3-4B-Instruct-2507", rank=8, train_unembed=False
    )
    tokenizer = training.get_tokenizer()
    prompt = tokenizer.encode("Q: Two plus two?\nA:", add_special_tokens=True)
    answer = [*tokenizer.encode(" Four", add_special_tokens=False), tokenizer.eos_token_id]
    tokens = prompt + answer
    weights = [0.0] * len(prompt) + [1.0] * len(answer)
    datum = trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": tokens[1:], "weights": weights[1:]},
    )
    fb_future = training.forward_backward([datum], "cross_entropy")
    optim_future = training.optim_step(trio.AdamParams(learning_rate=1e-3))
    fb_future.result()
    optim_future.result()
    training.save_state("first").result()
    training.save_state("second").result()

    rest = service.create_rest_client()
    checkpoints = rest.list_checkpoints(training.training_run_cuid).result().checkpoints
    for checkpoint in checkpoints:
        print(f"CHECKPOINT {checkpoint.path} {checkpoint.time.isoformat()}")
    newest = checkpoints[0]  # assumes the listing is newest first
    print(f"NEWEST {newest.path}")
    download = rest.download_checkpoint(newest.checkpoint_id, Path("newest.tar")).result()
    print(f"DOWNLOADED {download.bytes_written}")


if __name__ == "__main__":
    main()
