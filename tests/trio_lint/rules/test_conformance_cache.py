"""The conformance rules cache verdicts per process by (callee, release, keyword names): a call
that repeats a callee gets its own verdict from its own keywords, positional count and `*args`,
and every target release its own answers, in whatever order files and releases come."""

from __future__ import annotations

import textwrap

import pytest

from trio_lint import lint_source

CODES = ["PTR003", "PTR004", "PTR005", "PTR006", "PTR007", "PTR203", "PTR212", "PTR213"]
SOURCE = textwrap.dedent(
    """\
    import pytrio as trio

    def step(train: trio.TrainingClient, rest: trio.RestClient, batch, args):
        train.forward_backward(batch, "cross_entropy").result()
        train.forward_backward(batch, "cross_entropy", seed=1).result()
        train.forward_backward(batch, "cross_entropy", {}, 4, 5).result()
        train.forward_backward(*args).result()
        rest.get_checkpoint_archive_url("c").result()
        rest.get_checkpoint_archive_url("r", "c").result()
        trio.configure(request_timeout_seconds=5)
        trio.configure(timeout=5)
        trio.SamplingParams(max_tokens=8)
        trio.SamplingParams(max_tokens=8, num_beams=2)
        train.forward_backward(batch, "cross_entropy").result().metrics
        train.forward_backward(batch, "cross_entropy").result().loss_fn_outputs
    """
)
# (code, line) per target release: the same callee on lines 4-7, 8-9, 10-11 and 12-13.
EXPECTED = {
    "0.2.9": {
        ("PTR212", 5),  # `seed=`: no release has it
        ("PTR005", 6),  # five positional arguments
        ("PTR005", 9),  # 0.1's (run id, checkpoint id)
        ("PTR004", 11),  # `timeout=`, renamed in 0.2.9
        ("PTR203", 13),  # `num_beams=`
    },
    "0.1": {
        ("PTR212", 5),
        ("PTR005", 6),
        ("PTR007", 10),  # `configure` itself is 0.2's
        ("PTR007", 11),
        ("PTR203", 13),
    },
}


def _found(target: str) -> set[tuple[str, int]]:
    config = {"select": CODES, "force-sdk": True, "target-version": target}
    return {(f.code, f.line) for f in lint_source(SOURCE, "example.py", config)}


@pytest.mark.parametrize("order", [("0.2.9", "0.1", "0.2.9"), ("0.1", "0.2.9", "0.1")])
def test_each_call_and_release_gets_its_own_verdict(order: tuple[str, ...]) -> None:
    for target in order:
        assert _found(target) == EXPECTED[target], target
