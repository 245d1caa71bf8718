"""Training loop that logs how long each step took, from the result object."""

import pytrio as trio


def train(training: trio.TrainingClient, batches, lr=1e-4):
    adam = trio.AdamParams(learning_rate=lr)
    for step, batch in enumerate(batches):
        fb = training.forward_backward(batch, "cross_entropy")
        opt = training.optim_step(adam)
        out = fb.result()
        opt.result()
        print(f"step {step}: loss={out.metrics['loss_mean']:.3f} time={out.elapsed_time:.2f}s")  # bug: PTR006
