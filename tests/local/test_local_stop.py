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
