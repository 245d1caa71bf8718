"""Cosine learning-rate schedule written like a torch.optim loop."""

import math

import pytrio as trio


def lr_at(step, total, base=2e-4):
    return base * 0.5 * (1 + math.cos(math.pi * step / total))


def train(training: trio.TrainingClient, batches):
    total = len(batches)
    for step, batch in enumerate(batches):
        fb = training.forward_backward(batch, "cross_entropy")
        adam = trio.AdamParams(lr=lr_at(step, total), weight_decay=0.01)  # bug: PTR202
        training.optim_step(adam).result()
        print(step, fb.result().metrics["loss_mean"])
