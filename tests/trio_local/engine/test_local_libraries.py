"""The model libraries' import gate: one import at a time, and nobody waits longer than needed.

Stand-in libraries are written to a temporary directory: the first takes a moment to import
(transformers), the second blocks until the test lets it go (torch on a loaded machine).
"""

from __future__ import annotations

import dataclasses
import sys
import threading
import time
import types
import uuid

from trio_local.engine import libraries


def _libraries(tmp_path, monkeypatch) -> tuple[str, str, threading.Event, list[str]]:
    tag = uuid.uuid4().hex[:8]
    quick, held = f"quick_{tag}", f"held_{tag}"
    gate = types.ModuleType(f"gate_{tag}")
    gate.release = threading.Event()
    gate.log = []
    monkeypatch.setitem(sys.modules, gate.__name__, gate)
    (tmp_path / f"{quick}.py").write_text(
        f"import time, {gate.__name__} as g\ng.log.append('quick in')\ntime.sleep(0.3)\n"
        "g.log.append('quick out')\n"
    )
    (tmp_path / f"{held}.py").write_text(
        f"import {gate.__name__} as g\ng.log.append('held in')\n"
        "assert g.release.wait(30)\ng.log.append('held out')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return quick, held, gate.release, gate.log


def test_a_thread_waiting_for_a_library_is_not_held_up_by_the_next_import(
    tmp_path, monkeypatch
) -> None:
    quick, held, release, log = _libraries(tmp_path, monkeypatch)
    both = threading.Thread(target=libraries.import_model_libraries, args=(quick, held))
    both.start()
    while "quick in" not in log:  # the other thread arrives while `quick` is being imported
        time.sleep(0.001)
    one = threading.Thread(target=libraries.import_model_libraries, args=(quick,))
    one.start()
    one.join(10)
    try:
        assert not one.is_alive(), "waited for the import of a library it did not ask for"
        while "held in" not in log and both.is_alive():
            time.sleep(0.01)
        assert log[:3] == ["quick in", "quick out", "held in"]  # `quick` was imported once
    finally:
        release.set()
        both.join(10)
    assert log == ["quick in", "quick out", "held in", "held out"]
    assert quick in sys.modules and held in sys.modules


def test_a_failed_import_lets_the_others_through_and_is_tried_again(tmp_path, monkeypatch) -> None:
    quick, _, _, log = _libraries(tmp_path, monkeypatch)
    broken = f"broken_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{broken}.py").write_text("raise ImportError('broken install (test)')\n")
    for _ in range(2):  # not remembered as imported: the second call raises too
        try:
            libraries.import_model_libraries(broken)
        except ImportError as error:
            assert "broken install" in str(error)
        else:
            raise AssertionError("the broken import did not raise")
    done = threading.Thread(target=libraries.import_model_libraries, args=(quick,))
    done.start()
    done.join(10)
    assert not done.is_alive() and log == ["quick in", "quick out"]


def test_a_model_host_waits_for_an_import_in_progress(monkeypatch) -> None:
    """Building a host while another thread imports must not import alongside it (peft once
    saw a half-initialised transformers that way: "cannot import name 'AutoModel'")."""
    from trio_local.engine.model import ModelHost

    libraries.import_model_libraries("torch")  # in: an unguarded build would not wait at all
    monkeypatch.setattr(libraries, "_imported", set())  # as in a fresh process
    monkeypatch.setattr(libraries, "_importing", {"torch"})  # another thread's import
    spec = _tiny_spec()
    built: list[ModelHost] = []
    builder = threading.Thread(target=lambda: built.append(ModelHost(spec)))
    builder.start()
    builder.join(2.0)
    try:
        assert builder.is_alive() and not built, "built outside the import gate"
    finally:
        with libraries._changed:
            libraries._importing.clear()
            libraries._changed.notify_all()
        builder.join(30)
    assert built and built[0].spec == spec


def test_different_libraries_import_side_by_side(tmp_path, monkeypatch) -> None:
    """A tokenizer build (transformers) must not wait for the model's import of torch."""
    quick, held, release, log = _libraries(tmp_path, monkeypatch)
    slow = threading.Thread(target=libraries.import_model_libraries, args=(held,))
    slow.start()
    try:
        while "held in" not in log:
            time.sleep(0.001)
        other = threading.Thread(target=libraries.import_model_libraries, args=(quick,))
        other.start()
        other.join(10)
        assert not other.is_alive() and quick in sys.modules
        assert log == ["held in", "quick in", "quick out"]
    finally:
        release.set()
        slow.join(10)


def test_an_import_waiting_for_another_gives_up_when_stopped(tmp_path, monkeypatch) -> None:
    quick, held, release, log = _libraries(tmp_path, monkeypatch)
    first = threading.Thread(target=libraries.import_model_libraries, args=(held,))
    first.start()
    while "held in" not in log:
        time.sleep(0.001)
    stop = threading.Event()
    outcome: list[bool] = []
    waiter = threading.Thread(
        target=lambda: outcome.append(libraries.import_model_libraries(held, quick, stop=stop))
    )
    waiter.start()
    time.sleep(0.1)  # now waiting for the other thread's import of `held` to end
    stop.set()
    release.set()
    first.join(10)
    waiter.join(10)
    assert outcome == [False]
    assert "quick in" not in log and quick not in sys.modules  # never begun
    assert libraries.import_model_libraries(quick, stop=threading.Event()) is True


def _tiny_spec():
    from trio_local.catalogue import StandInSpec

    spec = StandInSpec(
        vocab_size=64, hidden_size=16, intermediate_size=32, num_heads=2, num_kv_heads=1
    )
    return dataclasses.replace(spec, head_dim=8, eos_id=1, pad_id=0)


def _tiny_host():
    from trio_local.engine.model import ModelHost

    return ModelHost(_tiny_spec())


def test_a_build_warns_nothing_and_leaves_the_warning_filters_alone() -> None:
    """A service in the user's process (serve_in_background) must neither print warnings of
    its own nor change the process's warning filters (a filter swap on a builder thread once
    undid the user's)."""
    import warnings

    import torch

    from trio_local.engine.model import LoraSpec

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        before = list(warnings.filters)
        host = _tiny_host()
        host.add_adapter(
            "run-1", LoraSpec(8, 0, train_mlp=True, train_attn=True, train_unembed=True)
        )
        host.activate("run-1")
        host.hidden_states(torch.arange(8)[None], None).sum().backward()
        assert [str(w.message) for w in caught] == []
        assert warnings.filters == before
        warnings.warn("the user's own warning", UserWarning, stacklevel=1)
        assert len(caught) == 1


def test_builds_on_another_thread_leave_this_threads_warning_filters_alone() -> None:
    """`warnings.catch_warnings()` on a builder thread put back its own copy of the process's
    filters on exit, dropping a filter this thread had added meanwhile (or keeping one it had
    removed)."""
    import warnings

    from trio_local.engine.model import LoraSpec

    host = _tiny_host()
    spec = LoraSpec(4, 0, train_mlp=True, train_attn=True, train_unembed=True)
    done = threading.Event()

    def build() -> None:
        try:
            for index in range(40):
                host.add_adapter(f"run-{index % 2}", spec)
        finally:
            done.set()

    builder = threading.Thread(target=build)
    lost = 0
    with warnings.catch_warnings():
        original = list(warnings.filters)
        builder.start()
        while not done.is_set():
            warnings.filterwarnings("error", message="a probe")
            time.sleep(0.002)
            if ("error", "a probe") not in {
                (f[0], f[1] and f[1].pattern) for f in warnings.filters
            }:
                lost += 1
            warnings.filters[:] = [
                f for f in warnings.filters if not (f[1] and f[1].pattern == "a probe")
            ]
        builder.join(30)
        kept = [f for f in warnings.filters if f not in original]
    assert lost == 0
    assert all(f[0] == "ignore" and f[1] is not None for f in kept), kept
