"""Skip bad batches, catching what the original skill text said the SDK raises."""

from pydantic import ValidationError

import pytrio as trio


def train(training: trio.TrainingClient, batches, adam):
    for batch in batches:
        try:
            training.forward_backward(batch, "cross_entropy").result()
            training.optim_step(adam).result()
        except (ValueError, ValidationError) as err:  # bug: PTR501
            print("skipping batch:", err)
