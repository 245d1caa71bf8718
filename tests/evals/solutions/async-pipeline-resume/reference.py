"""Async pipelined SFT that saves its state every 2 steps; --resume continues the newest state of
the same run in a new process."""

import argparse
import asyncio
import json
from pathlib import Path

import pytrio as trio

BASE_MODEL = "Qwen/Qwen3-4B-Instruct-2507"
PAIRS = [("Q: Capital of France?\nA:", " Paris"), ("Q: Two plus two?\nA:", " Four")]
RUN_FILE = Path("run.json")  # the run id, for the resuming process


def datum(tokenizer, prompt: str, answer: str) -> trio.Datum:
    prompt_ids = tokenizer.encode(prompt, add_special_tokens=True)
    answer_ids = [*tokenizer.encode(answer, add_special_tokens=False), tokenizer.eos_token_id]
    tokens = prompt_ids + answer_ids
    weights = [0.0] * len(prompt_ids) + [1.0] * len(answer_ids)
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": tokens[1:], "weights": weights[1:]},
    )


async def newest_state(service: trio.ServiceClient, run_id: str) -> str:
    rest = service.create_rest_client()
    checkpoints = (await rest.list_checkpoints_async(run_id)).checkpoints
    states = [c for c in checkpoints if c.checkpoint_type == "training"]
    return max(states, key=lambda c: c.time).path  # by time: no list order is promised


async def train(resume: bool, steps: int) -> None:
    service = trio.ServiceClient()
    if resume:
        run_id = json.loads(RUN_FILE.read_text())["run_id"]
        path = await newest_state(service, run_id)
        training = await service.create_training_client_from_state_with_optimizer_async(path)
        start = int(path.rsplit("step-", 1)[1])
        print(f"RESUMED {path}")
    else:
        training = await service.create_lora_training_client_async(base_model=BASE_MODEL, rank=8)
        RUN_FILE.write_text(json.dumps({"run_id": training.training_run_cuid}))
        start = 0
    tokenizer = training.get_tokenizer()
    batch = [datum(tokenizer, prompt, answer) for prompt, answer in PAIRS]
    adam = trio.AdamParams(learning_rate=2e-3)
    losses = []
    for step in range(start, start + steps):
        # Both submitted before either is awaited: the service never waits for the client.
        fb_future = await training.forward_backward_async(batch, "cross_entropy")
        optim_future = await training.optim_step_async(adam)
        metrics = (await fb_future).metrics
        await optim_future
        losses.append(metrics["loss_sum"] / metrics["token_count"])
        print(f"step {step} loss {losses[-1]:.4f}")
        if (step + 1) % 2 == 0:
            saved = await (await training.save_state_async(f"step-{step + 1}"))
            print(f"SAVED {saved.path}")
    print(f"LOSS first={losses[0]:.4f} last={losses[-1]:.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    asyncio.run(train(args.resume, args.steps))


if __name__ == "__main__":
    main()
