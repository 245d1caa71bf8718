"""Stopping a service stops what it started: nothing of it runs or writes after the stop."""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("torch")

import trio_local


def _background_threads(before: set[threading.Thread]) -> list[threading.Thread]:
    # The HTTP thread stays by design: it answers 410 until the process exits (see RunningServer).
    return [
        thread
        for thread in threading.enumerate()
        if thread not in before and thread.is_alive() and thread.name != "trio-local-http"
    ]


def test_leaving_the_block_at_once_begins_nothing_after_the_stop(monkeypatch) -> None:
    """A block that exits while the warm-up imports, builds and loads: the exit does not fail
    (a tokenizer copy went on into the removed temporary directory), no model is built after
    it (the warm-up went on to build and exercise one, peft's warnings included), and what was
    running when it stopped ends by itself."""
    from trio_local.engine import engine

    # "After the stop" is after the engine's close(), not after the block's last line: the
    # service stops its HTTP server, scheduler and tokenizers first, and a warm-up build that
    # begins in that time began before the stop.
    stopped = threading.Event()
    built_after_stop: list[str] = []
    build = engine.ModelHost
    close = engine.Engine.close

    def recording_build(*args, **kwargs):
        if stopped.is_set():
            built_after_stop.append(threading.current_thread().name)
        return build(*args, **kwargs)

    def recording_close(self) -> None:
        close(self)
        stopped.set()

    monkeypatch.setattr(engine, "ModelHost", recording_build)
    monkeypatch.setattr(engine.Engine, "close", recording_close)
    before = set(threading.enumerate())
    for _ in range(3):
        stopped.clear()
        with trio_local.serve_in_background(configure_sdk=False) as service:
            data_dir = service.data_dir
        assert stopped.is_set()
        assert not data_dir.exists()
    for thread in _background_threads(before):
        thread.join(120)
    assert _background_threads(before) == []
    assert built_after_stop == []


def test_a_stop_does_not_wait_for_an_import_in_progress(tmp_path, monkeypatch) -> None:
    """trio-mcp stops its in-process service on the way out, and its client allows two seconds
    before SIGTERM: a half-done import of torch is left to end on its daemon thread."""
    from trio_local.engine.engine import Engine

    entered, release = threading.Event(), threading.Event()
    imported = Engine._import_torch

    def held_import(engine: Engine) -> None:
        entered.set()
        assert release.wait(120)
        imported(engine)

    monkeypatch.setattr(Engine, "_import_torch", held_import)
    before = set(threading.enumerate())

    def serve_and_leave() -> None:
        with trio_local.serve_in_background(data_dir=tmp_path, configure_sdk=False):
            assert entered.wait(60)

    block = threading.Thread(target=serve_and_leave)
    try:
        block.start()
        block.join(30)
        assert not block.is_alive(), "the stop waited for the import"
        held = [t for t in _background_threads(before) if t.name == "trio-local-warm-up"]
        assert held, "the import in progress was not left running"
    finally:
        release.set()
    for thread in _background_threads(before):
        thread.join(120)
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
    builder.close()
    late = builder.submit(lambda: "never")
    for future in (queued, late):  # failed at once, with a code the SDK does not retry
        error = future.exception(timeout=1)
        assert isinstance(error, EngineError) and error.code == "service_stopping"
    (thread,) = [t for t in threading.enumerate() if t.name == "test-builder"]
    assert thread.is_alive()  # still running the job it had begun
    release.set()
    assert first.result(timeout=30) == "built"
    thread.join(30)
    assert not thread.is_alive()


def _held_tokenizers(tmp_path, monkeypatch, hold: str):
    """Tokenizers whose cache build (hold="build") or data-dir copy (hold="copy") waits for
    `release` (the build is the real Qwen3 build), stopped while it waits: the stop's thread is
    returned after a moment."""
    from trio_local import catalogue, tokenizers
    from trio_local.engine.tokenizer import cached_build

    entered, release = threading.Event(), threading.Event()
    copy = tokenizers._copy_into

    def build(family):
        if hold == "build":
            entered.set()
            assert release.wait(60)
        return cached_build(catalogue.QWEN3)

    def held_copy(cached, target):
        entered.set()
        assert release.wait(60)
        return copy(cached, target)

    if hold == "copy":
        monkeypatch.setattr(tokenizers, "_copy_into", held_copy)
    # Only a Qwen3 id is served: every family's "build" here is the Qwen3 one, and seeding a
    # Qwen3.5 id would link it to that build in the modelscope cache every service shares.
    held = tokenizers.Tokenizers(tmp_path, build, models=(catalogue.DEFAULT_BASE_MODEL,))
    held.start()
    assert entered.wait(30)
    stop = threading.Thread(target=held.stop)
    stop.start()
    stop.join(5 if hold == "build" else 1)
    return held, stop, release


def test_a_stop_does_not_wait_for_a_tokenizer_build_and_copies_nothing_after(
    tmp_path, monkeypatch
) -> None:
    from trio_local import catalogue
    from trio_local.errors import EngineError

    built, stop, release = _held_tokenizers(tmp_path, monkeypatch, hold="build")
    assert not stop.is_alive(), "the stop waited for a build into the cache"
    release.set()
    for family in catalogue.FAMILIES:
        error = built.ready(family).exception(timeout=60)
        assert isinstance(error, EngineError) and error.code == "service_stopping"
    assert not (tmp_path / "tokenizer").exists()  # nothing was copied into the data dir


def test_a_stop_waits_for_a_copy_in_progress(tmp_path, monkeypatch) -> None:
    from trio_local import catalogue
    from trio_local.errors import EngineError

    copying, stop, release = _held_tokenizers(tmp_path, monkeypatch, hold="copy")
    assert stop.is_alive(), "the stop did not wait for the copy into the data directory"
    release.set()
    stop.join(30)
    assert not stop.is_alive()
    first = copying.ready(catalogue.QWEN3).result(timeout=30)  # the copy that had begun
    assert (first / "tokenizer.json").is_file()
    for family in catalogue.FAMILIES:  # and nothing begun after the stop
        if family != catalogue.QWEN3:
            error = copying.ready(family).exception(timeout=30)
            assert isinstance(error, EngineError) and error.code == "service_stopping", error
