"""The linter's code fingerprint (part of every cache key) follows the bytes of its sources, not
their mtimes: a fresh clone of the same code keeps a cache valid, an edit invalidates it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import trio_lint.run.cache_keys as cache_keys

ENGINE = Path(cache_keys.__file__).resolve().parents[1]  # trio_lint/


def _copy_engine(to: Path) -> list[str]:
    shutil.copytree(ENGINE, to / "trio_lint", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ENGINE.parent / "pytrio_facts", to / "pytrio_facts",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    return sorted(str(p) for p in to.rglob("*") if p.suffix in {".py", ".json"})


def test_a_copy_with_new_mtimes_has_the_same_fingerprint_and_an_edit_changes_it(tmp_path):
    installed = cache_keys.content_fingerprint(cache_keys._engine_files())
    files = _copy_engine(tmp_path / "clone")
    for path in files:
        os.utime(path, (1_000_000, 1_000_000))
    assert cache_keys.content_fingerprint(files) == installed
    rule = tmp_path / "clone" / "trio_lint" / "rules" / "hf_lr.py"
    rule.write_text(rule.read_text() + "\n# edited\n")
    assert cache_keys.content_fingerprint(files) != installed


def test_the_memo_is_keyed_by_stat_and_survives_an_unwritable_cache_dir(tmp_path, monkeypatch):
    cache_keys.code_fingerprint.cache_clear()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first = cache_keys.code_fingerprint()
    assert first == cache_keys.content_fingerprint(cache_keys._engine_files())
    (memo,) = (tmp_path / "cache" / "trio-lint" / "code-fingerprints").iterdir()
    assert memo.read_text() == first
    # A corrupt memo is not trusted: the content is read again.
    memo.write_text("not a digest")
    cache_keys.code_fingerprint.cache_clear()
    assert cache_keys.code_fingerprint() == first
    # An unwritable cache dir (a file where the folder should be) costs only the re-read.
    blocked = tmp_path / "blocked"
    blocked.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    cache_keys.code_fingerprint.cache_clear()
    assert cache_keys.code_fingerprint() == first
    cache_keys.code_fingerprint.cache_clear()
