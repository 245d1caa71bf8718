"""trio-lint on every .py file of the installed site-packages (torch, transformers, peft, pytrio
and the rest) with `--force-sdk --select ALL`, so every file is parsed and walked by every rule:
no internal error (PTR903), and a syntax error (PTR900) only where Python's own parser agrees.

The verdict is cached under the user's cache dir ($PYTRIO_SKILL_TEST_CACHE, else
~/.cache/pytrio-skill-tests/site-sweep/), keyed on a digest of the linter's sources and data
(their bytes, so a fresh clone of the same code hits the cache) and of the swept file list (path,
size, mtime). `tests/trio_lint/test_site_packages.py` reads the full verdict this script leaves;
on a miss it sweeps a sample (every pytrio file and a slice of the rest that moves with the
linter's digest), since the full sweep costs about 18 CPU-minutes.

    python bench/site_packages_sweep.py            # the full sweep, cached
    python bench/site_packages_sweep.py --limit 50 # a smoke run on 50 files, not cached
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import sysconfig
import tempfile
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

from trio_lint.run.cache_keys import code_fingerprint
from trio_lint.run.digest import digest

TRIO_LINT = str(Path(sys.executable).parent / "trio-lint")
# Files per console-script call: the whole list would not fit in one command line.
CHUNK = 2000


@dataclass
class Verdict:
    key: str
    scope: str  # "full", "sample" or "limit"
    files: int
    seconds: float
    findings: int = 0
    crashes: list[dict] = field(default_factory=list)  # PTR903 records
    false_syntax_errors: list[str] = field(default_factory=list)  # PTR900 where ast parses

    @property
    def ok(self) -> bool:
        return not self.crashes and not self.false_syntax_errors


def cache_root() -> Path:
    base = (
        os.environ.get("PYTRIO_SKILL_TEST_CACHE") or Path.home() / ".cache" / "pytrio-skill-tests"
    )
    return Path(base) / "site-sweep"


def site_packages_files() -> list[Path]:
    site = Path(sysconfig.get_paths()["purelib"])
    return sorted(p for p in site.rglob("*.py") if p.is_file() and not p.is_symlink())


def sweep_key(files: list[Path]) -> str:
    """The linter's content fingerprint and the swept files' (path, size, mtime)."""
    listing = []
    for path in files:
        stat = path.stat()
        listing.append(f"{path}:{stat.st_size}:{stat.st_mtime_ns}")
    return digest(f"{code_fingerprint()}\n" + "\n".join(listing), 12)


def sample(files: list[Path], key: str, *, one_in: int) -> list[Path]:
    """Every pytrio file, and the files whose digest with `key` falls in one slot of `one_in`:
    a linter change sweeps another slice of the tree."""
    return [
        p
        for p in files
        if "/pytrio/" in p.as_posix() or int(digest(f"{key}:{p}", 4), 16) % one_in == 0
    ]


def _parses(path: Path) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(path.read_bytes())
    except (SyntaxError, ValueError):
        return False
    return True


def run_sweep(files: list[Path], *, key: str, scope: str) -> Verdict:
    started = time.perf_counter()
    records: list[dict] = []
    with tempfile.TemporaryDirectory() as cwd:
        for start in range(0, len(files), CHUNK):
            process = subprocess.run(
                [
                    TRIO_LINT,
                    "--force-sdk",
                    "--select",
                    "ALL",
                    "--no-cache",
                    "--exit-zero",
                    "--output-format",
                    "json",
                    *map(str, files[start : start + CHUNK]),
                ],
                cwd=cwd,
                capture_output=True,
                text=True,
                timeout=1800,
                check=False,
            )
            if process.returncode != 0:
                raise RuntimeError(
                    f"trio-lint exited {process.returncode}: {process.stderr[-2000:]}"
                )
            records += json.loads(process.stdout)
    unparsable = sorted({r["filename"] for r in records if r["code"] == "PTR900"})
    return Verdict(
        key=key,
        scope=scope,
        files=len(files),
        seconds=round(time.perf_counter() - started, 1),
        findings=len(records),
        crashes=[r for r in records if r["code"] == "PTR903"],
        false_syntax_errors=[name for name in unparsable if _parses(Path(name))],
    )


def load(key: str, scope: str) -> Verdict | None:
    path = cache_root() / f"{key}-{scope}.json"
    try:
        data = json.loads(path.read_text())
        verdict = Verdict(**data)
    except (OSError, ValueError, TypeError):
        return None
    return verdict if verdict.key == key and verdict.scope == scope else None


def store(verdict: Verdict) -> None:
    """Written atomically: a reader sees a whole verdict or none."""
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    target = root / f"{verdict.key}-{verdict.scope}.json"
    handle, temporary = tempfile.mkstemp(dir=root, prefix=target.name, suffix=".tmp")
    with os.fdopen(handle, "w") as out:
        json.dump(asdict(verdict), out)
    Path(temporary).replace(target)


def cached_sweep(
    files: list[Path], *, scope: str, one_in: int = 24, key: str | None = None
) -> Verdict:
    """The cached verdict for `files` ("full") or for their sample ("sample"), else a new one.
    `key`: their sweep_key, when the caller has it (it stats every file)."""
    key = key or sweep_key(files)
    verdict = load(key, scope)
    if verdict is None:
        chosen = files if scope == "full" else sample(files, key, one_in=one_in)
        verdict = run_sweep(chosen, key=key, scope=scope)
        store(verdict)
    return verdict


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="sweep the first N files only")
    parser.add_argument("--no-cache", action="store_true", help="sweep even on a cached verdict")
    args = parser.parse_args()
    files = site_packages_files()
    if args.limit is not None:
        verdict = run_sweep(files[: args.limit], key="-", scope="limit")
    elif args.no_cache:
        verdict = run_sweep(files, key=sweep_key(files), scope="full")
        store(verdict)
    else:
        verdict = cached_sweep(files, scope="full")
    rate = verdict.files / verdict.seconds if verdict.seconds else float("inf")
    crashes, false_errors = len(verdict.crashes), len(verdict.false_syntax_errors)
    print(f"{'scope':<8} {'files':>7} {'seconds':>8} {'files/s':>8} {'findings':>9} ", end="")
    print(f"{'PTR903':>7} {'false PTR900':>13}")
    print(f"{verdict.scope:<8} {verdict.files:>7} {verdict.seconds:>8} {rate:>8.1f} ", end="")
    print(f"{verdict.findings:>9} {crashes:>7} {false_errors:>13}")
    for record in verdict.crashes[:10]:
        row = record.get("location", {}).get("row")
        print(f"PTR903 {record['filename']}:{row}: {record['message']}")
    for name in verdict.false_syntax_errors[:10]:
        print(f"PTR900 but ast parses: {name}")
    sys.exit(0 if verdict.ok else 1)


if __name__ == "__main__":
    main()
