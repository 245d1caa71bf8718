"""localfs.atomic: the target holds the old bytes or the new, never a part, and no temporary file
outlives the call, whichever step fails."""

from __future__ import annotations

import stat
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from localfs import atomic
from localfs.atomic import atomic_file, write_atomic

FAULTS = ("none", "write", "fsync", "check", "replace", "interrupt")


class Injected(Exception):
    pass


def _write_with_fault(target: Path, data: bytes, fault: str, monkeypatch: pytest.MonkeyPatch):
    def check() -> None:
        if fault == "check":
            raise Injected("before_replace")

    def failing(*_args: object) -> None:
        raise OSError(5, "injected")

    if fault == "fsync":
        monkeypatch.setattr(atomic.os, "fsync", failing)
    if fault == "replace":
        monkeypatch.setattr(atomic.os, "replace", failing)
    try:
        with atomic_file(target, durable=True, before_replace=check, mode=0o640) as handle:
            handle.write(data[: len(data) // 2])
            if fault == "write":
                raise Injected("mid-write")
            if fault == "interrupt":
                raise KeyboardInterrupt
            handle.write(data[len(data) // 2 :])
    finally:
        monkeypatch.undo()


@settings(max_examples=40, deadline=None)
@given(old=st.binary(max_size=64), new=st.binary(max_size=64), fault=st.sampled_from(FAULTS))
def test_a_failure_at_any_step_keeps_the_old_bytes_and_leaves_no_temporary_file(
    tmp_path_factory: pytest.TempPathFactory, old: bytes, new: bytes, fault: str
) -> None:
    directory = tmp_path_factory.mktemp("atomic")
    target = directory / "state.json"
    target.write_bytes(old)
    with pytest.MonkeyPatch.context() as monkeypatch:
        if fault == "none":
            _write_with_fault(target, new, fault, monkeypatch)
        else:
            with pytest.raises((Injected, OSError, KeyboardInterrupt)):
                _write_with_fault(target, new, fault, monkeypatch)
    assert target.read_bytes() == (new if fault == "none" else old)
    assert [p.name for p in directory.iterdir()] == ["state.json"]
    if fault == "none":
        assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_the_temporary_file_is_named_by_prefix_and_suffix_beside_the_target(
    tmp_path: Path,
) -> None:
    seen: list[str] = []
    target = tmp_path / "out.txt"
    write_atomic(
        target,
        b"x",
        prefix=".trio-lint-",
        suffix=".tmp",
        before_replace=lambda: seen.extend(p.name for p in tmp_path.iterdir()),
    )
    assert len(seen) == 1
    assert seen[0].startswith(".trio-lint-")
    assert seen[0].endswith(".tmp")
    assert target.read_bytes() == b"x"
    default: list[str] = []
    write_atomic(
        target, b"y", before_replace=lambda: default.extend(p.name for p in tmp_path.iterdir())
    )
    assert any(name.startswith(".out.txt.") for name in default)


def test_concurrent_writers_leave_one_whole_value(tmp_path: Path) -> None:
    target = tmp_path / "ledger.json"
    values = [bytes([n]) * 4096 for n in range(8)]
    threads = [threading.Thread(target=write_atomic, args=(target, v)) for v in values]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert target.read_bytes() in values
    assert [p.name for p in tmp_path.iterdir()] == ["ledger.json"]
