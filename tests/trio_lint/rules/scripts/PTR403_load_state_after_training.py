"""Early stopping that rolls back to the best checkpoint on the same client."""

import pytrio as trio


def train(training: trio.TrainingClient, batches, adam, patience=2):
    best, best_path, bad = float("inf"), None, 0
    for step, batch in enumerate(batches):
        loss = training.forward_backward(batch, "cross_entropy").result().metrics["loss_mean"]
        training.optim_step(adam).result()
        if loss < best:
            best, bad = loss, 0
            best_path = training.save_state(f"best-{step}").result().path
        else:
            bad += 1
        if bad > patience:
            break
    training.load_state(best_path).result()  # bug: PTR403
    return best
