"""Reads of a PyTRIO future that PTR101 missing-result reports: the future of a call read as if it
were the response (`fb.metrics`, `tc.forward_backward(...).metrics`, `resp[0]`).

Shared by that rule and the conformance rules (`_conformance.py`), which leave to it a response's
member read on a future, so that one mistake gets one finding. Not a rule module (the registry
skips names that start with `_`).
"""

from __future__ import annotations

import ast

# Methods whose sync form returns a future (TrainingClient, SamplingClient, RestClient on 0.2).
# Only a cheap pre-check: the receiver model decides whether the call really returns a future.
FUTURE_METHODS = frozenset(
    {
        "forward",
        "forward_backward",
        "forward_backward_custom",
        "optim_step",
        "save_state",
        "save_weights_for_sampler",
        "load_state",
        "load_state_with_optimizer",
        "sample",
        "compute_logprobs",
        "get_training_run",
        "list_training_runs",
        "list_checkpoints",
        "list_user_checkpoints",
        "get_checkpoint_archive_url",
        "get_checkpoint_download_url",
        "download_checkpoint",
        "get_session",
        "list_sessions",
        "get_sampler",
    }
)
# What may legitimately be done with a future (APIFuture and concurrent.futures.Future).
FUTURE_API = frozenset(
    {"result", "done", "exception", "cancel", "cancelled", "running", "map", "add_done_callback"}
)


def is_reference(expr: ast.expr) -> bool:
    """A name or `self.x`: a value bound elsewhere (the model says what it holds)."""
    return isinstance(expr, ast.Name) or (
        isinstance(expr, ast.Attribute)
        and isinstance(expr.value, ast.Name)
        and expr.value.id == "self"
    )


def checked_receiver(expr: ast.expr) -> bool:
    """The expressions PTR101 looks at when they hold a future: a reference, a call of one of
    `FUTURE_METHODS`, or `await` of a method call (one await of a two-await method)."""
    if isinstance(expr, ast.Await):
        return isinstance(expr.value, ast.Call) and isinstance(expr.value.func, ast.Attribute)
    if isinstance(expr, ast.Call):
        return isinstance(expr.func, ast.Attribute) and expr.func.attr in FUTURE_METHODS
    return is_reference(expr)
