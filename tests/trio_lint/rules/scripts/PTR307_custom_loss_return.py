"""DPO through forward_backward_custom, with the loss function of a torch training loop."""

import torch
import torch.nn.functional as F

import pytrio as trio

BETA = 0.1


def dpo_loss(data, logprobs):
    chosen = torch.stack([lp.sum() for lp in logprobs[0::2]])
    rejected = torch.stack([lp.sum() for lp in logprobs[1::2]])
    return -F.logsigmoid(BETA * (chosen - rejected)).mean()  # bug: PTR307


def dpo_step(training: trio.TrainingClient, pairs, adam):
    fb = training.forward_backward_custom(pairs, dpo_loss)
    training.optim_step(adam).result()
    return fb.result().metrics
