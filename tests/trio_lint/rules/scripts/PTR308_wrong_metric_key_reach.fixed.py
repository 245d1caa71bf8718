"""A training loop whose step helper returns the metrics dict, read with Tinker's key."""

import pytrio as trio


def train_step(training: trio.TrainingClient, batch):
    result = training.forward_backward(batch, "cross_entropy").result()
    training.optim_step(trio.AdamParams(learning_rate=1e-4)).result()
    return result.metrics


def train(training: trio.TrainingClient, batches):
    for batch in batches:
        metrics = train_step(training, batch)
        print("loss", metrics.get("loss_sum"))  # bug: PTR308
