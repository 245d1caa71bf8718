"""GRPO and DPO training steps, named after the TRL trainers."""

import pytrio as trio


def grpo_step(training: trio.TrainingClient, batch, adam):
    fb = training.forward_backward(batch, loss_fn="grpo")  # bug: PTR303
    training.optim_step(adam).result()
    return fb.result()


def sft_step(training: trio.TrainingClient, batch):
    return training.forward_backward(batch, "CrossEntropy").result()  # bug: PTR303
