"""The result cache: what it guarantees (stale results never served, damage ignored, settings
invalidate) and what makes a warm run cheap (unchanged files are neither read nor linted)."""

from __future__ import annotations

import marshal
import os
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

from tests.support.lint import BAD, CLEAN, run_main

if TYPE_CHECKING:
    from trio_lint.output.diagnostics import Diagnostic


CONCISE = ("--output-format", "concise")


def _cache_file(project: Path) -> Path:
    """The per-file result store."""
    (found,) = (
        p for p in (project / ".trio_lint_cache").glob("*.cache") if not p.name.startswith("run-")
    )
    return found


def _store(value: object) -> bytes:
    """A well-formed store envelope around `value` (the checksum matches; the shape may not)."""
    from trio_lint.run.cache import MAGIC

    payload = marshal.dumps(value)
    return MAGIC + struct.pack("<II", zlib.crc32(payload), len(payload)) + payload


def _raw_store(payload: bytes) -> bytes:
    from trio_lint.run.cache import MAGIC

    return MAGIC + struct.pack("<II", zlib.crc32(payload), len(payload)) + payload


def _stat(size: int, mtime_ns: int, ctime_ns: int, ino: int = 7) -> os.stat_result:
    stat = SimpleNamespace(st_size=size, st_mtime_ns=mtime_ns, st_ctime_ns=ctime_ns, st_ino=ino)
    return stat  # type: ignore[return-value]


def _diagnostic() -> Diagnostic:
    from trio_lint.output.diagnostics import Diagnostic, Severity

    return Diagnostic(
        code="PTR202",
        name="hf-lr",
        message="cached",
        severity=Severity.ERROR,
        path="a.py",
        line=3,
        column=8,
        end_line=3,
        end_column=10,
    )


def test_same_size_edit_with_mtime_put_back_is_relinted(project: Path) -> None:
    target = project / "a.py"
    target.write_text(BAD)
    before = target.stat()
    assert "PTR202" in run_main("a.py", *CONCISE, cwd=project).out
    # Same length, different findings, and the old mtime restored: only ctime/content tell.
    edited = BAD.replace("lr=1e-4", "lR=1e-4")
    assert len(edited) == len(BAD)
    target.write_text(edited)
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert target.stat().st_size == before.st_size
    warm = run_main("a.py", *CONCISE, cwd=project).out
    assert warm == run_main("a.py", *CONCISE, "--no-cache", cwd=project).out
    assert "PTR202" not in warm


def test_a_file_edited_while_the_run_reads_it_is_cached_under_the_bytes_linted(
    project: Path, monkeypatch
) -> None:
    # The run reads each file once: the cache digest and the findings come from the same bytes.
    # (When the worker read the file a second time, an edit in between was linted and cached
    # under the digest of the bytes read first: the old text, restored, got the edit's answer.)
    import trio_lint.run.invocation as runner

    target = project / "a.py"
    target.write_text(BAD)
    real_read = runner.read_regular
    reads: list[str] = []

    def read_then_edit(path: str, *args, **kwargs) -> bytes:
        data = real_read(path, *args, **kwargs)
        if path.endswith("a.py"):
            reads.append(path)
            if len(reads) == 1:
                target.write_text(CLEAN)  # edited right after the run read it
        return data

    monkeypatch.setattr(runner, "read_regular", read_then_edit)
    racing = run_main("a.py", *CONCISE, cwd=project)
    monkeypatch.undo()
    for text in (BAD, CLEAN, BAD):  # every text answered as an uncached run answers it
        target.write_text(text)
        warm = run_main("a.py", *CONCISE, cwd=project)
        assert warm.out == run_main("a.py", *CONCISE, "--no-cache", cwd=project).out, text
    assert "PTR202" in racing.out  # what was read (BAD) is what was linted
    assert len(reads) == 1  # one read of the file per run


def test_a_damaged_cache_is_ignored_and_replaced(project: Path) -> None:
    from trio_lint.run.cache import content_hash, read_store

    (project / "a.py").write_text(BAD)
    (project / "b.py").write_text(CLEAN)
    files = ("a.py", "b.py", *CONCISE)
    expected = run_main(*files, "--no-cache", cwd=project)
    run_main(*files, cwd=project)
    cache_file = _cache_file(project)
    intact = cache_file.read_bytes()
    digest = content_hash(BAD.encode())
    a_py = str((project / "a.py").resolve())
    damaged = [
        intact[: len(intact) // 2],  # truncated mid-write
        intact[:-1] + bytes([intact[-1] ^ 1]),  # one flipped bit: the checksum catches it
        b"\x00\xff not a store",
        intact.replace(b"/py3.", b"/py2.", 1),  # written by another Python (marshal may differ)
        _store([1, 2, 3]),  # a well-formed store, wrong shape
        _store({a_py: (digest, [{"code": 5}], None)}),
        _store({a_py: (digest, 5, None)}),
        _store({a_py: "not a tuple"}),
        _store({a_py: [digest, None, None]}),
        _raw_store(b"\xff\xfe\xfd garbage marshal"),
        _raw_store(b"[\x01\x00\x00\x00" * 100_000),  # nesting deeper than marshal allows
    ]
    for content in damaged:
        cache_file.write_bytes(content)
        got = run_main(*files, cwd=project)
        assert (got.code, got.out) == (expected.code, expected.out), content[:40]
        assert got.err == ""
        assert a_py in read_store(cache_file)  # rewritten whole, readable again
    assert not list(cache_file.parent.glob("*.tmp"))


def test_a_config_change_invalidates(project: Path) -> None:
    (project / "a.py").write_text(BAD)
    assert "PTR202" in run_main("a.py", *CONCISE, cwd=project).out
    (project / "pyproject.toml").write_text(
        "[project]\nname = 'p'\n\n[tool.trio-lint]\nignore = ['PTR202']\n"
    )
    warm = run_main("a.py", *CONCISE, cwd=project).out
    assert "PTR202" not in warm
    assert warm == run_main("a.py", *CONCISE, "--no-cache", cwd=project).out


def test_stamp_is_trusted_only_when_unchanged_and_not_racy(tmp_path: Path) -> None:
    from trio_lint.run.cache import MISS, RACY_NS, Cache

    cache = Cache(tmp_path, "key")
    old = time.time_ns() - 10 * RACY_NS
    stat = _stat(100, old, old)
    cache.put("a.py", "digest", stat, [_diagnostic()])
    (hit,) = cache.by_stat("a.py", stat)  # type: ignore[misc]
    assert hit.message == "cached"
    assert cache.by_stat("a.py", _stat(100, old, old + 1)) is MISS  # utime put mtime back
    assert cache.by_stat("a.py", _stat(101, old, old)) is MISS
    assert cache.by_stat("a.py", _stat(100, old, old, ino=8)) is MISS  # replaced by a new file
    # Written within the timestamp granularity of this run: the next run must hash it again.
    recent = time.time_ns()
    cache.put("b.py", "digest-b", _stat(100, recent, recent), None)
    assert cache.by_stat("b.py", _stat(100, recent, recent)) is MISS
    assert cache.by_digest("b.py", "digest-b") is None  # the content hash still answers


def test_cache_survives_a_round_trip_and_writes_atomically(tmp_path: Path) -> None:
    from trio_lint.run.cache import MISS, RACY_NS, Cache, content_hash

    old = time.time_ns() - 10 * RACY_NS
    cache = Cache(tmp_path / "c", "key")
    cache.put("a.py", content_hash(b"x"), _stat(1, old, old), [_diagnostic()])
    cache.put("b.py", content_hash(b"y"), _stat(1, old, old), None)
    cache.save()
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == [".gitignore", "key.cache"]
    again = Cache(tmp_path / "c", "key")
    assert again.by_stat("b.py", _stat(1, old, old)) is None
    assert again.by_digest("a.py", content_hash(b"x")) == [_diagnostic()]
    assert again.by_digest("a.py", content_hash(b"z")) is MISS


def test_save_to_an_unwritable_place_is_silent(tmp_path: Path) -> None:
    from trio_lint.run.cache import Cache

    blocker = tmp_path / "file"
    blocker.write_text("")
    cache = Cache(blocker / "cache", "key")  # a directory below a regular file: never creatable
    cache.put("a.py", "d", _stat(1, 0, 0), None)
    cache.save()
    assert blocker.read_text() == ""


def test_a_warm_run_imports_no_engine(project: Path) -> None:
    """A warm run answers from the cache: neither the engine nor the rules' checking code (nor,
    through them, libcst) is imported."""
    (project / "a.py").write_text(BAD)
    (project / "b.py").write_text("print('no sdk here')\n")
    cold = run_main(".", *CONCISE, cwd=project)
    script = (
        "import contextlib, io, sys\n"
        "from trio_lint.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    code = main(['.', '--output-format', 'concise'])\n"
        "engine = ('trio_lint.lint.linter', 'trio_lint.lint.dispatch')\n"
        "loaded = [m for m in engine if m in sys.modules]\n"
        "print(code, loaded)\n"
        "sys.stderr.write(out.getvalue())\n"
    )
    warm = subprocess.run(
        [sys.executable, "-c", script],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert warm.stdout.strip() == f"{cold.code} []"
    assert warm.stderr == cold.out


def test_stores_unused_for_two_weeks_are_pruned_on_save(tmp_path: Path) -> None:
    from trio_lint.run.cache import PRUNE_AFTER_S, read_store, write_store

    directory = tmp_path / "cache"
    directory.mkdir()
    old = time.time() - PRUNE_AFTER_S - 60
    stale = [directory / "old.cache", directory / "walk-old.index", directory / "run-old.cache"]
    recent = directory / "recent.cache"
    in_use = directory / "in-use.cache"
    for store in [*stale, recent, in_use]:
        write_store(directory, store, {"x": 1})
    for store in [*stale, in_use]:
        os.utime(store, (old, old))
    (directory / "legacy.json").write_text("{}")  # the format before stores
    (directory / "notes.txt").write_text("not ours")
    assert read_store(in_use) == {"x": 1}  # reading an old store marks it as still in use
    write_store(directory, directory / "new.cache", {"y": 2})
    assert sorted(p.name for p in directory.iterdir()) == [
        ".gitignore",
        "in-use.cache",
        "new.cache",
        "notes.txt",
        "recent.cache",
    ]
