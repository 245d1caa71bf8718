"""Per-token loss the way the original skill text computed it."""

import pytrio as trio


def train(training: trio.TrainingClient, batches, adam):
    for step, batch in enumerate(batches):
        fb = training.forward_backward(batch, "cross_entropy")
        training.optim_step(adam).result()
        result = fb.result()
        total = result.metrics.get("loss_sum", 0.0)  # bug: PTR308
        tokens = sum(sum(d.loss_fn_inputs["weights"].tolist()) for d in batch)
        print(f"step {step}: {total / tokens:.4f} (reported {result.metrics['loss']})")  # bug: PTR308
