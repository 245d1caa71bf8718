"""Training loop with defensive timeouts and a retry, the requests-library way."""

import pytrio as trio


def robust_step(training: trio.TrainingClient, batch, adam, retries=3):
    for attempt in range(retries):
        try:
            fb = training.forward_backward(batch, "cross_entropy")
            result = fb.result(timeout=60)  # bug: PTR109
            training.optim_step(adam).result(timeout=30)  # bug: PTR109
            return result.metrics["loss_mean"]
        except TimeoutError:  # bug: PTR501
            print(f"attempt {attempt} timed out, retrying")
    raise RuntimeError("step failed")
