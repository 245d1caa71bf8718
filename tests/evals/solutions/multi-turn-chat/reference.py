"""Multi-turn chat SFT with PyTRIO: every assistant turn of a conversation is trained.

A conversation with several assistant turns becomes ONE datum. Its tokens are exactly the chat
template's rendering of the whole conversation; weight 1.0 falls on the content and the
end-of-turn token of every assistant turn (the tokens the sampler produces), weight 0.0 on the
system and user turns, on each turn's header (`<|im_start|>assistant\\n`) and on the newline the
template writes after the end-of-turn token (sampling stops at the end-of-turn token, so that
newline is never generated). Splitting only at the last assistant turn would feed the earlier
answers to the model as masked prompt and never train them.

Run offline:       trio-local run python examples/08_multiturn_chat_sft.py
Run on PyTRIO:     python examples/08_multiturn_chat_sft.py --lr 1e-4 --steps 60   (after
                   `trio login`)
"""

import argparse

import pytrio as trio

CONVERSATIONS = [
    [
        {"role": "system", "content": "Answer in one word."},
        {"role": "user", "content": "Capital of France?"},
        {"role": "assistant", "content": "Paris"},
        {"role": "user", "content": "And of Italy?"},
        {"role": "assistant", "content": "Rome"},
    ],
    [
        {"role": "system", "content": "Answer in one word."},
        {"role": "user", "content": "Colour of the sky?"},
        {"role": "assistant", "content": "Blue"},
        {"role": "user", "content": "And of grass?"},
        {"role": "assistant", "content": "Green"},
    ],
]


def chat_tokens_and_weights(tokenizer, messages: list[dict]) -> tuple[list[int], list[float]]:
    """The template's tokens for the whole conversation and a weight per token: 1.0 on each
    assistant turn's content and end-of-turn token, 0.0 everywhere else."""
    end_of_turn = tokenizer.eos_token  # Qwen3 Instruct: "<|im_end|>", what sampling stops on
    tokens: list[int] = []
    weights: list[float] = []
    rendered = ""

    def extend(text: str, weight: float) -> None:
        ids = tokenizer.encode(text, add_special_tokens=False)  # the template has them already
        tokens.extend(ids)
        weights.extend([weight] * len(ids))

    def render(upto: int, generation_prompt: bool = False) -> str:
        text = tokenizer.apply_chat_template(
            messages[:upto], tokenize=False, add_generation_prompt=generation_prompt
        )
        if not text.startswith(rendered):
            raise ValueError(
                "the chat template rewrites earlier turns (e.g. drops old <think> blocks), so one "
                "datum cannot hold them all: build one datum per assistant turn instead"
            )
        return text

    for end, message in enumerate(messages, start=1):
        if message["role"] != "assistant":
            text = render(end)
            extend(text[len(rendered) :], 0.0)
            rendered = text
            continue
        head = render(end - 1, generation_prompt=True)  # ... <|im_start|>assistant\n
        extend(head[len(rendered) :], 0.0)
        rendered = head
        turn = render(end)[len(head) :]  # content <|im_end|> \n
        stop = turn.index(end_of_turn) + len(end_of_turn)
        extend(turn[:stop], 1.0)  # what the sampler must produce, up to the end-of-turn token
        extend(turn[stop:], 0.0)  # the template's newline after it: never sampled, not trained
        rendered += turn
    return tokens, weights


def chat_datum(tokenizer, messages: list[dict]) -> trio.Datum:
    tokens, weights = chat_tokens_and_weights(tokenizer, messages)
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": tokens[1:], "weights": weights[1:]},
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-model", default="Qwen/Qwen3-4B-Instruct-2507")
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--lr", type=float, default=2e-3)
    args = parser.parse_args()

    service = trio.ServiceClient()
    training = service.create_lora_training_client(base_model=args.base_model, rank=args.rank)
    tokenizer = training.get_tokenizer()
    batch = [chat_datum(tokenizer, conversation) for conversation in CONVERSATIONS]
    adam = trio.AdamParams(learning_rate=args.lr)
    losses = []
    for step in range(args.steps):
        fb_future = training.forward_backward(batch, loss_fn="cross_entropy")
        optim_future = training.optim_step(adam)
        metrics = fb_future.result().metrics
        optim_future.result()
        losses.append(metrics["loss_mean"])
        print(f"step {step} loss {metrics['loss_mean']:.4f}")
    print(f"LOSS first={losses[0]:.4f} last={losses[-1]:.4f}")

    # Sample each assistant turn the way it was trained: the template's prompt up to the turn,
    # with the generation prompt, stopping at the end-of-turn token.
    sampler = training.save_weights_and_get_sampling_client()
    params = trio.SamplingParams(max_tokens=8, temperature=0.0, stop=[tokenizer.eos_token_id])
    conversation = CONVERSATIONS[0]
    prompt = tokenizer.apply_chat_template(
        conversation[:4], tokenize=False, add_generation_prompt=True
    )
    ids = tokenizer.encode(prompt, add_special_tokens=False)
    future = sampler.sample(
        prompt=trio.ModelInput.from_ints(ids), num_samples=1, sampling_params=params
    )
    print(f"SAMPLE {future.result().sequences[0].text}")


if __name__ == "__main__":
    main()
