"""One mistake, one finding: a future used under a name it lacks gets PTR213's finding or PTR101's,
never both, and the one it gets says what is wrong (checked against the installed pytrio's own
`APIFuture` and response types)."""

from __future__ import annotations

import asyncio
import textwrap
from concurrent.futures import Future

import pytest
from pytrio.types import APIFuture, ForwardBackwardOutput

from trio_lint import lint_source

SOURCE = textwrap.dedent(
    """\
    import pytrio as trio

    async def step(training: trio.TrainingClient, data, batches):
        fut = training.forward_backward(data, "cross_entropy")
        out = await fut.result_async()
        futs = []
        for batch in batches:
            futs.append(training.forward_backward(batch, "cross_entropy"))
        outs = [await f.result_async() for f in futs]
        direct = training.forward_backward(data, "cross_entropy").result_async()
        loss = fut.metrics["loss_sum"]
        first = [f.loss_fn_outputs for f in futs]
        dumped = fut.model_dump_json()
        return out, outs, direct, loss, first, dumped

    def sessions(rest: trio.RestClient):
        found = rest.list_sessions()
        return found.get("sessions", [])
    """
)
# line -> the one code it must get
EXPECTED = {5: "PTR213", 9: "PTR213", 10: "PTR213", 11: "PTR101", 12: "PTR101", 13: "PTR101"}
# A concurrent.futures.Future read as the 0.1 REST dict: only PTR101 sees it.
EXPECTED[18] = "PTR101"


async def _await(future: object) -> object:
    return await future  # type: ignore[misc]


def _lint(select: list[str]) -> list:
    return lint_source(SOURCE, "example.py", {"select": select, "force-sdk": True})


def test_each_mistake_gets_one_finding() -> None:
    found = [(d.line, d.code) for d in _lint(["PTR"])]
    assert sorted(found) == sorted(EXPECTED.items())


def test_the_future_method_finding_names_the_method_not_the_result() -> None:
    by_line = {d.line: d for d in _lint(["PTR"])}
    message = by_line[5].message
    assert message.startswith("`APIFuture.result_async()`: no pytrio release has this method")
    # Inside `async def` the future itself is awaited (`APIFuture.__await__`).
    assert message.endswith("; use `await fut` (an `APIFuture` is awaitable)")
    assert by_line[10].message.endswith("; use `await` the future (an `APIFuture` is awaitable)")
    assert "before reading" in by_line[11].message and "`.metrics`" in by_line[11].message


def test_the_wait_advice_fits_the_future_and_the_function() -> None:
    """`await` only for an `APIFuture` inside `async def`; a RestClient call's
    `concurrent.futures.Future` in a sync function gets `.result()` alone."""
    by_line = {d.line: d.message for d in _lint(["PTR101"])}
    assert by_line[11].startswith("`fut` holds a future: call `fut.result()` (or `await fut`)")
    assert by_line[18].startswith(
        "`found` holds a `concurrent.futures.Future`: call `found.result()` before reading"
    )
    assert "await" not in by_line[18]


@pytest.mark.parametrize("code", ["PTR101", "PTR213"])
def test_a_rule_alone_finds_what_it_finds_in_the_full_run(code: str) -> None:
    """Which rule owns a mistake does not depend on which other rules are selected."""
    alone = [(d.line, d.message) for d in _lint([code])]
    full = [(d.line, d.message) for d in _lint(["PTR"]) if d.code == code]
    assert alone == full
    assert alone, code


def test_the_findings_are_true_on_the_installed_sdk() -> None:
    """`APIFuture` has neither `result_async` nor the response's members; its result has them."""
    output = ForwardBackwardOutput(loss_fn_outputs=[], metrics={"loss_sum": 1.0})
    fut = APIFuture.completed(output)
    with pytest.raises(AttributeError):
        fut.result_async()  # type: ignore[attr-defined]
    for name in ("metrics", "loss_fn_outputs", "model_dump_json"):
        with pytest.raises(AttributeError):
            getattr(fut, name)
        assert hasattr(fut.result(), name)
    # The advice PTR101 and PTR213 give: an `APIFuture` is awaitable, a concurrent future is not.
    assert asyncio.run(_await(fut)) is output
    rest_future: Future = Future()
    rest_future.set_result(output)
    with pytest.raises(TypeError):
        asyncio.run(_await(rest_future))
    with pytest.raises(AttributeError):
        rest_future.get  # type: ignore[attr-defined]  # noqa: B018
