"""Save training state, resume it in a new client, and continue from the same step.

Shows `save_state(name)` (weights + optimizer) with the step in the name, a "restart" with
`create_training_client_from_state_with_optimizer(path)`, a check that the resumed weights give
the same evaluation loss (`forward`, no gradient), and training that continues from the saved
step. Your own step counter travels in the checkpoint name; the service does not store it.

Run offline:       trio-local run python examples/03_checkpoint_resume.py
Run on PyTRIO:     python examples/03_checkpoint_resume.py --lr 1e-4   (after `trio login`)
"""

import argparse
import re

import pytrio as trio

PAIRS = [("Q: capital of France?\nA:", " Paris"), ("Q: two plus two?\nA:", " Four")]


def build_batch(tokenizer) -> list[trio.Datum]:
    batch = []
    for prompt, completion in PAIRS:
        prompt_ids = tokenizer.encode(prompt, add_special_tokens=True)
        completion_ids = tokenizer.encode(completion, add_special_tokens=False)
        tokens = prompt_ids + completion_ids + [tokenizer.eos_token_id]
        weights = [0.0] * len(prompt_ids) + [1.0] * (len(completion_ids) + 1)
        batch.append(
            trio.Datum(
                model_input=trio.ModelInput.from_ints(tokens[:-1]),
                loss_fn_inputs={"target_tokens": tokens[1:], "weights": weights[1:]},
            )
        )
    return batch


def train(training: trio.TrainingClient, batch, adam, first_step: int, last_step: int) -> None:
    for step in range(first_step, last_step):
        fb_future = training.forward_backward(batch, "cross_entropy")
        optim_future = training.optim_step(adam)
        metrics = fb_future.result().metrics
        optim_future.result()
        print(f"step {step} loss {metrics['loss_mean']:.4f}")


def eval_loss(training: trio.TrainingClient, batch) -> float:
    return training.forward(batch, "cross_entropy").result().metrics["loss_mean"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-model", default="Qwen/Qwen3-4B-Instruct-2507")
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--save-at", type=int, default=6)
    parser.add_argument("--lr", type=float, default=2e-3)
    args = parser.parse_args()

    service = trio.ServiceClient()
    adam = trio.AdamParams(learning_rate=args.lr)
    training = service.create_lora_training_client(base_model=args.base_model, rank=16, seed=0)
    batch = build_batch(training.get_tokenizer())

    train(training, batch, adam, 0, args.save_at)
    before = eval_loss(training, batch)
    state = training.save_state(f"resume-demo-step-{args.save_at:06d}").result()
    print(f"saved step {args.save_at} eval {before:.4f} path {state.path}")

    # A new process would start here, knowing only the path.
    resumed = service.create_training_client_from_state_with_optimizer(state.path)
    match = re.search(r"step-(\d+)", state.path)
    start = int(match.group(1)) if match else args.save_at  # or keep it in your own file
    after = eval_loss(resumed, batch)
    print(f"resumed step {start} eval {after:.4f}")
    train(resumed, batch, adam, start, args.steps)

    # Weights only, fresh optimizer: for a new phase of training rather than a resume.
    fresh = service.create_training_client_from_state(state.path)
    print(f"weights-only eval {eval_loss(fresh, batch):.4f}")


if __name__ == "__main__":
    main()
