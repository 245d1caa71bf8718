"""Stopping a service stops what it started: nothing of it runs or writes after the stop."""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("torch")

import trio_local


def _background_threads(before: set[threading.Thread]) -> list[str]:
    # The HTTP thread stays by design: it answers 410 until the process exits (see RunningServer).
    return sorted(
        thread.name
        for thread in threading.enumerate()
        if thread not in before and thread.is_alive() and thread.name != "trio-local-http"
    )


def test_leaving_the_block_at_once_stops_the_warm_up_and_the_tokenizer_builds() -> None:
    """A block that exits while the warm-up imports, builds and loads: the exit neither fails
    (a tokenizer copy into the removed temporary directory did) nor leaves the warm-up running
    (it went on to build and exercise a model in the background)."""
    before = set(threading.enumerate())
    for _ in range(3):
        with trio_local.serve_in_background(configure_sdk=False) as service:
            data_dir = service.data_dir
        assert not data_dir.exists()
        assert _background_threads(before) == []


def test_a_stopped_service_with_its_own_data_dir_leaves_it_whole(tmp_path) -> None:
    with trio_local.serve_in_background(data_dir=tmp_path, configure_sdk=False):
        pass
    # Reopened at once: the lock was released only after the background work ended.
    with trio_local.serve_in_background(data_dir=tmp_path, configure_sdk=False) as again:
        assert again.data_dir == tmp_path.resolve()
    assert (tmp_path / "tokenizer" / "qwen3" / "tokenizer.json").is_file()


def test_builds_not_begun_fail_with_service_stopping_and_the_running_one_ends() -> None:
    from trio_local.engine.engine import _Builder
    from trio_local.errors import EngineError

    builder = _Builder("test-builder")
    started, release = threading.Event(), threading.Event()

    def running() -> str:
        started.set()
        assert release.wait(30)
        return "built"

    first = builder.submit(running)
    assert started.wait(30)
    queued = builder.submit(lambda: "never")
    thread = builder.close()
    late = builder.submit(lambda: "never")
    for future in (queued, late):  # failed at once, with a code the SDK does not retry
        error = future.exception(timeout=1)
        assert isinstance(error, EngineError) and error.code == "service_stopping"
    assert thread is not None and thread.is_alive()
    release.set()
    assert first.result(timeout=30) == "built"
    thread.join(30)
    assert not thread.is_alive()
