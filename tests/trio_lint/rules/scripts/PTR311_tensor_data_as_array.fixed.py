"""SFT loop that scores the batch from the forward-backward result, treating TensorData as arrays."""

import numpy as np
import torch

import pytrio as trio


def make_datum(tokens: list[int], weights: list[float]) -> trio.Datum:
    # The user's own arrays: plain numpy until the Datum converts them.
    inputs = {
        "target_tokens": np.asarray(tokens[1:], dtype=np.int64),
        "weights": np.asarray(weights[1:], dtype=np.float32),
    }
    print("tokens in batch:", int(np.asarray(inputs["weights"]).sum()))
    return trio.Datum(model_input=trio.ModelInput.from_ints(tokens[:-1]), loss_fn_inputs=inputs)


def train_step(train: trio.TrainingClient, rows: list[tuple[list[int], list[float]]]) -> float:
    batch = [make_datum(tokens, weights) for tokens, weights in rows]
    result = train.forward_backward(batch, "cross_entropy").result()
    train.optim_step(trio.AdamParams(learning_rate=1e-4)).result()
    logprobs = np.concatenate([x["logprobs"].to_numpy() for x in result.loss_fn_outputs])  # bug: PTR311
    weights = np.concatenate([d.loss_fn_inputs["weights"].to_numpy() for d in batch])  # bug: PTR311
    first = torch.tensor(result.loss_fn_outputs[0]["logprobs"].to_numpy())  # bug: PTR311
    print("first token logprob:", result.loss_fn_outputs[0]["logprobs"][0])  # bug: PTR311
    print("targets:", list(batch[0].loss_fn_inputs["target_tokens"]))  # bug: PTR311
    print("sequence lengths:", [len(x["logprobs"]) for x in result.loss_fn_outputs], first.shape)
    good = np.concatenate([x["logprobs"].to_numpy() for x in result.loss_fn_outputs])
    return float(-np.dot(logprobs, weights) / weights.sum()) + float(good.sum()) * 0
