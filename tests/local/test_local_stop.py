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


def test_an_exiting_stop_leaves_a_running_import_to_the_process_exit(tmp_path, monkeypatch) -> None:
    """The console scripts exit right after the stop: an import of torch in progress is not
    finished for nothing. An in-process stop waits for it, as the first test shows."""
    from trio_local.config import ServeConfig
    from trio_local.engine.engine import Engine
    from trio_local.http.serving import RunningServer
    from trio_local.server import Service

    entered, release = threading.Event(), threading.Event()

    def held_import(engine: Engine) -> None:
        entered.set()
        assert release.wait(120)

    monkeypatch.setattr(Engine, "_import_torch", held_import)
    try:
        stops: list[threading.Thread] = []
        for exiting in (True, False):
            entered.clear()
            config = ServeConfig(port=0, data_dir=tmp_path / str(exiting), cycle_ms=0)
            server = RunningServer(Service(config)).start()
            server.wait_ready()
            assert entered.wait(60)
            stop = threading.Thread(target=server.stop, kwargs={"exiting": exiting})
            stop.start()
            stop.join(10 if exiting else 2)  # the exiting one has nothing to wait for
            stops.append(stop)
        exiting_stop, waiting_stop = stops
        assert not exiting_stop.is_alive()  # returned with the import still held
        assert waiting_stop.is_alive()  # waits for the import to end
    finally:
        release.set()
    waiting_stop.join(60)
    assert not waiting_stop.is_alive()
