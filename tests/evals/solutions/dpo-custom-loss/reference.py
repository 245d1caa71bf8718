"""DPO with `forward_backward_custom`: a loss PyTRIO does not build in, computed locally in torch.

Each preference pair (prompt, chosen, rejected) becomes two datums whose `weights` mark the
completion tokens. Reference logprobs come from one `forward` before training (the adapter starts
as the base model). `forward_backward_custom` then gets the current per-token logprobs as torch
tensors, our DPO loss runs locally, and the SDK sends its gradient back to the trainer; `beta`
travels in `loss_fn_config` to a three-argument loss function. Needs torch installed locally.

Run offline:       trio-local run python examples/07_custom_loss_dpo.py
Run on PyTRIO:     python examples/07_custom_loss_dpo.py --lr 1e-5   (after `trio login`)
"""

import argparse

import pytrio as trio
import torch
import torch.nn.functional as F

PAIRS = [
    ("Q: Is the sky blue?\nA:", " Yes", " No"),
    ("Q: Is fire cold?\nA:", " No", " Yes"),
    ("Q: Is water wet?\nA:", " Yes", " No"),
]


def completion_datum(tokenizer, prompt: str, completion: str) -> trio.Datum:
    prompt_ids = tokenizer.encode(prompt, add_special_tokens=True)
    completion_ids = tokenizer.encode(completion, add_special_tokens=False)
    completion_ids.append(tokenizer.eos_token_id)
    tokens = prompt_ids + completion_ids
    weights = [0.0] * len(prompt_ids) + [1.0] * len(completion_ids)
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": tokens[1:], "weights": weights[1:]},
    )


def sequence_logprobs(data: list[trio.Datum], logprobs: list[torch.Tensor]) -> torch.Tensor:
    """Sum of the completion tokens' logprobs, one value per datum."""
    sums = []
    for datum, token_logprobs in zip(data, logprobs, strict=True):
        mask = torch.tensor(datum.loss_fn_inputs["weights"].tolist())
        sums.append((token_logprobs * mask).sum())
    return torch.stack(sums)


def make_dpo_loss(reference: torch.Tensor):
    def dpo_loss(data: list[trio.Datum], logprobs: list[torch.Tensor], config: dict):
        policy = sequence_logprobs(data, logprobs)
        # datums alternate chosen, rejected
        chosen_ratio = policy[0::2] - reference[0::2]
        rejected_ratio = policy[1::2] - reference[1::2]
        margin = config["beta"] * (chosen_ratio - rejected_ratio)
        loss = -F.logsigmoid(margin).mean()
        accuracy = (margin > 0).float().mean()
        return loss, {
            "dpo_loss": loss.item(),
            "dpo_margin": margin.mean().item(),
            "dpo_accuracy": accuracy.item(),
        }

    return dpo_loss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-model", default="Qwen/Qwen3-4B-Instruct-2507")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--beta", type=float, default=0.1)
    parser.add_argument("--lr", type=float, default=2e-3)
    args = parser.parse_args()

    service = trio.ServiceClient()
    training = service.create_lora_training_client(base_model=args.base_model, rank=16, seed=0)
    tokenizer = training.get_tokenizer()
    data = []
    for prompt, chosen, rejected in PAIRS:
        data.append(completion_datum(tokenizer, prompt, chosen))
        data.append(completion_datum(tokenizer, prompt, rejected))

    # Reference logprobs: the untrained adapter is the base model.
    reference_output = training.forward(data, "cross_entropy").result()
    reference = sequence_logprobs(
        data,
        [torch.tensor(out["logprobs"].tolist()) for out in reference_output.loss_fn_outputs],
    ).detach()

    dpo_loss = make_dpo_loss(reference)
    adam = trio.AdamParams(learning_rate=args.lr)
    losses = []
    for step in range(args.steps):
        fb_future = training.forward_backward_custom(
            data, dpo_loss, loss_fn_config={"beta": args.beta}
        )
        optim_future = training.optim_step(adam)
        metrics = fb_future.result().metrics
        optim_future.result()
        losses.append(metrics["dpo_loss"])
        print(f"step {step} loss {metrics['dpo_loss']:.4f} margin {metrics['dpo_margin']:.4f}")
    print(f"LOSS first={losses[0]:.4f} last={losses[-1]:.4f}")


if __name__ == "__main__":
    main()
