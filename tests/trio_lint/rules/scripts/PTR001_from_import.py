"""Fine-tune on a JSONL file, written with HF-style explicit imports."""

import json

from pytrio import AdamParams, Datum, ModelInput, ServiceClient  # bug: PTR001

BASE_MODEL = "Qwen/Qwen3-4B-Instruct-2507"


def load_rows(path):
    with open(path) as handle:
        return [json.loads(line) for line in handle]


def to_datum(tokenizer, row):
    prompt = tokenizer.encode(row["prompt"])
    answer = tokenizer.encode(row["answer"], add_special_tokens=False)
    tokens = prompt + answer
    weights = [0.0] * len(prompt) + [1.0] * len(answer)
    return Datum(
        model_input=ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": tokens[1:], "weights": weights[1:]},
    )


def main():
    client = ServiceClient()
    trainer = client.create_lora_training_client(base_model=BASE_MODEL, rank=16)
    tokenizer = trainer.get_tokenizer()
    batch = [to_datum(tokenizer, row) for row in load_rows("train.jsonl")]
    for step in range(10):
        fb = trainer.forward_backward(batch, loss_fn="cross_entropy")
        opt = trainer.optim_step(AdamParams(learning_rate=1e-4))
        print(step, fb.result().metrics["loss_mean"])
        opt.result()


if __name__ == "__main__":
    main()
