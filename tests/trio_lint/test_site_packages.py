"""Robustness on real code: trio-lint on the installed site-packages with the SDK prefilter forced
off and every rule selected (bench/site_packages_sweep.py does the sweeping).

The full sweep (about 16,000 files, some 18 CPU-minutes) is not redone for unchanged work: its
verdict is cached, keyed on the linter's source bytes and the swept file list. When the cache
holds no full verdict for this code and tree, the test sweeps a sample instead (every pytrio file
and a slice of the rest that moves with the linter's digest, itself cached); `python
bench/site_packages_sweep.py` runs and caches the full sweep."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "site_packages_sweep.py"


def _sweep_module():
    spec = importlib.util.spec_from_file_location("site_packages_sweep", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


sweep = _sweep_module()


@pytest.mark.slow
def test_every_site_packages_file_lints_without_crashes() -> None:
    files = sweep.site_packages_files()
    assert any("/pytrio/" in p.as_posix() for p in files) and len(files) > 5000
    key = sweep.sweep_key(files)
    verdict = sweep.load(key, "full") or sweep.cached_sweep(files, scope="sample", key=key)
    assert verdict.files > 200 if verdict.scope == "sample" else verdict.files == len(files)
    assert verdict.crashes == []
    assert verdict.false_syntax_errors == []


def test_the_sweep_reports_a_crash_and_a_false_syntax_error(tmp_path, monkeypatch):
    """The verdict is built from what the console script printed: a PTR903 record is a crash, and
    a PTR900 on a file Python parses is a false syntax error (real ones are kept out)."""
    good, bad = tmp_path / "good.py", tmp_path / "bad.py"
    good.write_text("x = 1\n")
    bad.write_text("def (:\n")
    records = [
        {"code": "PTR903", "filename": str(good), "message": "internal error"},
        {"code": "PTR900", "filename": str(good), "message": "syntax error"},
        {"code": "PTR900", "filename": str(bad), "message": "syntax error"},
    ]

    class Done:
        returncode, stderr = 0, ""
        stdout = __import__("json").dumps(records)

    monkeypatch.setattr(sweep.subprocess, "run", lambda *a, **k: Done())
    verdict = sweep.run_sweep([good, bad], key="k", scope="limit")
    assert not verdict.ok
    assert [r["code"] for r in verdict.crashes] == ["PTR903"]
    assert verdict.false_syntax_errors == [str(good)]


def test_the_cache_key_follows_the_file_list_and_the_sample_moves_with_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTRIO_SKILL_TEST_CACHE", str(tmp_path / "cache"))
    files = []
    for index in range(200):
        path = tmp_path / ("pytrio" if index < 3 else "other") / f"m{index}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"x = {index}\n")
        files.append(path)
    key = sweep.sweep_key(files)
    assert sweep.sweep_key(files[:-1]) != key
    files[5].write_text("x = 'longer now'\n")
    assert sweep.sweep_key(files) != key
    chosen = sweep.sample(files, key, one_in=10)
    assert set(files[:3]) <= set(chosen) and 3 < len(chosen) < 60
    assert sweep.sample(files, "another key", one_in=10) != chosen
    verdict = sweep.Verdict(key=key, scope="full", files=200, seconds=1.0)
    sweep.store(verdict)
    assert sweep.load(key, "full") == verdict
    assert sweep.load(key, "sample") is None
    (tmp_path / "cache" / "site-sweep" / f"{key}-full.json").write_text("{not json")
    assert sweep.load(key, "full") is None
