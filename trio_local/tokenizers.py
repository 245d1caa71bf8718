"""The offline tokenizers: one build per vocabulary family, one modelscope snapshot per id.

Each family's tokenizer is built once (in a background thread, ~5-10 s the first time, then
cached in trio-local's cache directory) and copied into the data directory for the engine. The
SDK's `get_tokenizer(model_id)` loads through modelscope with `local_files_only=True` first, so
seeding `<MODELSCOPE_CACHE>/models/<Org>--<Name>/snapshots/master` with a link to the family's
build makes any served id load offline under its real name; the catalogue's ids are seeded at
start, any other id when a run for it is created.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

from trio_local import catalogue
from trio_local.config import default_cache_dir
from trio_local.errors import EngineError, service_stopping

logger = logging.getLogger("trio_local")


def modelscope_snapshot(cache_root: Path, model_id: str) -> Path:
    """Where modelscope (the SDK's tokenizer loader) looks for a cached model."""
    org, name = model_id.split("/", 1)
    return cache_root / "models" / f"{org}--{name}" / "snapshots" / "master"


def modelscope_cache() -> Path:
    """A modelscope cache root holding only trio-local's tokenizers, one for every service.

    modelscope resolves its cache root once per process, so in-process services must all share
    one root; it lives in trio-local's own cache, never in the user's modelscope cache.
    """
    return default_cache_dir() / "modelscope"


def _copy_into(cached: Path, target: Path) -> Path:
    if not (target / "tokenizer.json").is_file():
        staging = target.with_name(f".{target.name}.copy")
        shutil.rmtree(staging, ignore_errors=True)
        shutil.copytree(cached, staging)
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
    return target


def _link(snapshot: Path, build: Path) -> None:
    if snapshot.resolve() == build.resolve():
        return
    snapshot.parent.mkdir(parents=True, exist_ok=True)
    link = snapshot.with_name(f".master.{os.getpid()}.{threading.get_ident()}")
    link.unlink(missing_ok=True)
    link.symlink_to(build.resolve(), target_is_directory=True)
    link.replace(snapshot)  # atomic: a concurrent loader sees the old link or the new one


class Tokenizers:
    """Per-family builds (futures resolving to the engine's copy) and per-id snapshots.

    `build(family)` makes the family's tokenizer files (in a shared cache) and returns their
    directory; the engine's tokenizer module supplies it, so this module needs no engine.
    """

    def __init__(
        self,
        data_dir: Path,
        build: Callable[[catalogue.Family], Path],
        models: tuple[str, ...] = (),
    ) -> None:
        self.root = data_dir / "tokenizer"
        self._build = build
        self.models = models
        self._builds: dict[str, Path] = {}
        self._ready: dict[str, Future] = {family.name: Future() for family in catalogue.FAMILIES}
        self._seeded: set[str] = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._copying = threading.Lock()  # held while writing into the data directory

    def directory(self, family: catalogue.Family) -> Path:
        """The engine's copy of `family`'s tokenizer (exists once `ready(family)` is done)."""
        return self.root / family.name

    def ready(self, family: catalogue.Family) -> Future:
        return self._ready[family.name]

    def build_of(self, family: catalogue.Family) -> Path:
        """The family's build in trio-local's cache, shared by every data directory (exists
        once `ready(family)` is done); `directory(family)` is this service's copy of it."""
        self.ready(family).result()
        return self._builds[family.name]

    def start(self) -> None:
        threading.Thread(target=self._build_all, name="trio-local-tokenizer", daemon=True).start()

    def stop(self) -> None:
        """Copy nothing more into the data directory, which may be removed next: waits for a
        copy in progress (a few milliseconds), not for a build into trio-local's cache (5-10 s
        when cold; it is staged and renamed into place, so it may end with the process).
        Families not copied yet fail with `service_stopping`."""
        # The flag first, then the lock: set under the lock, the build thread could take the
        # lock back after its copy and begin the next family before this thread got it.
        self._stopping.set()
        with self._copying:
            pass

    def _build_all(self) -> None:
        # The announced families first, the default (Qwen3) family before any other.
        entries = catalogue.announced(self.models)
        order = sorted(
            catalogue.FAMILIES,
            key=lambda f: (f not in {e.family for e in entries}, f != catalogue.QWEN3),
        )
        for family in order:
            future = self._ready[family.name]
            try:
                if self._stopping.is_set():
                    raise service_stopping(f"the {family.name} tokenizer build")
                cached = self._build(family)
                with self._copying:
                    if self._stopping.is_set():
                        raise service_stopping(f"the {family.name} tokenizer copy")
                    self._builds[family.name] = cached
                    _copy_into(cached, self.directory(family))
                    for entry in entries:
                        if entry.family == family:
                            self.seed(entry)
                future.set_result(self.directory(family))
            except EngineError as error:  # stopping: not a failure
                future.set_exception(error)
            except BaseException as error:
                logger.exception("building the %s tokenizer failed", family.name)
                future.set_exception(error)

    def seed(self, entry: catalogue.CatalogueEntry) -> None:
        """Make the SDK's offline tokenizer lookup find `entry.model_id` (after its build)."""
        if entry.model_id in self._seeded:
            return
        build = self._builds.get(entry.family.name)
        if build is None:
            self.ready(entry.family).result()
            build = self._builds[entry.family.name]
        with self._lock:
            _link(modelscope_snapshot(modelscope_cache(), entry.model_id), build)
            self._seeded.add(entry.model_id)
