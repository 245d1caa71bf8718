"""A trainer class that submits in one method and reads in another, and a helper that sums
losses straight off the futures it collected."""

import pytrio as trio


class Trainer:
    def __init__(self, service: trio.ServiceClient, base_model: str):
        self.training = service.create_lora_training_client(base_model=base_model, rank=16)

    def submit(self, batch):
        self.pending = self.training.forward_backward(batch, "cross_entropy")
        self.step = self.training.optim_step(trio.AdamParams(learning_rate=1e-4))

    def report(self):
        loss = self.pending.metrics["loss_sum"]  # bug: PTR101
        return loss


def first_sample(sampler: trio.SamplingClient, prompt, params):
    response = sampler.sample(prompt, num_samples=2, sampling_params=params)
    for sequence in response:  # bug: PTR101
        print(sequence)
    return response


def mean_loss(training: trio.TrainingClient, batches):
    future = training.forward_backward(batches, "cross_entropy")
    return sum(future) / len(batches)  # bug: PTR101
