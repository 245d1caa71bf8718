"""A 0.1-era helper module that reaches into the SDK's internals."""

import pytrio as trio
from pytrio.lib.training_client import TrainingClient  # bug: PTR002
from pytrio.types.forward.datum import Datum  # bug: PTR002
from pytrio import SampleInput  # bug: PTR001, PTR002


def make_batch(pairs) -> list[Datum]:
    batch = []
    for prompt_ids, target_ids in pairs:
        batch.append(
            SampleInput(
                model_input=trio.ModelInput.from_ints(prompt_ids),
                loss_fn_inputs={"target_tokens": target_ids},
            )
        )
    return batch


def train_once(client: TrainingClient, pairs):
    result = client.forward_backward(make_batch(pairs), "cross_entropy").result()
    return result.metrics["loss_mean"]
