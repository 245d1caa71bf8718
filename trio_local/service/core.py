"""Service: the data directory, key, store, scheduler and engine (served by `http.serving`),
and the use cases the routes call (`sessions`, `training_runs`, `sampling_runs`, `checkpoints`,
`trainer_events`, `sampler`, `stats`): a route parses, authenticates and renders, nothing else.

Start-up stays light (no torch import on the serving thread) so the service answers at once;
the tokenizer is built and the default model warmed up on background threads (`Engine.warm_up`),
and a request that needs them before they are done waits for them.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from trio_local import catalogue
from trio_local.checks import Checker, CheckReport
from trio_local.checks.chat import ChatTokens, cached_chat_tokens
from trio_local.config import STATS_PATH, ServeConfig
from trio_local.engine.engine import Engine
from trio_local.engine.tokenizer import cached_build
from trio_local.liveness import Liveness
from trio_local.scheduler import Scheduler
from trio_local.security import issue_actor_token, load_or_create_api_key, load_or_create_secret
from trio_local.service.checkpoints import Checkpoints
from trio_local.service.events import TrainerEvents
from trio_local.service.models import ModelSetup
from trio_local.service.sampling import Sampler
from trio_local.service.sampling_runs import SamplingRuns
from trio_local.service.sessions import Sessions
from trio_local.service.stats import Stats
from trio_local.service.training_runs import TrainingRuns
from trio_local.storage import faults
from trio_local.storage.db import Store
from trio_local.storage.faults import DataDirUnusable
from trio_local.storage.lock import DataDirLock
from trio_local.storage.recovery import recover_checkpoints
from trio_local.tokenizers import Tokenizers, modelscope_cache, modelscope_snapshot

__all__ = ["Service", "modelscope_cache", "modelscope_snapshot"]

logger = logging.getLogger("trio_local")


class Service:
    def __init__(self, config: ServeConfig) -> None:
        config.validate()
        self.config = config
        self.data_dir = config.data_dir.expanduser().resolve()
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            # Before anything reads or repairs the directory: a second service is refused here.
            self.lock = DataDirLock(self.data_dir).acquire()
        except (OSError, sqlite3.Error) as error:
            raise _unusable(error, self.data_dir) from error
        try:
            self._open_state(config)
        except (OSError, sqlite3.Error) as error:
            self.lock.release()
            raise _unusable(error, self.data_dir) from error
        except BaseException:
            self.lock.release()
            raise

    def _open_state(self, config: ServeConfig) -> None:
        stored_key, self.key_created = load_or_create_api_key(self.data_dir)
        self.api_key = config.api_key or stored_key
        if config.api_key:
            self.key_created = False
        self.secret = load_or_create_secret(self.data_dir)
        self.store = Store(self.data_dir / "trio-local.sqlite3")
        recover_checkpoints(self.store, self.data_dir)
        self.scheduler = Scheduler(cycle_ms=config.cycle_ms)
        self.tokenizers = Tokenizers(self.data_dir, cached_build, config.models)
        self.engine = Engine(self.store, self.data_dir, self.tokenizers, config)
        self.liveness = Liveness(
            self.store,
            max_training_runs=config.max_training_runs,
            heartbeat_timeout_s=config.heartbeat_timeout_s,
            free_run=lambda run_id: self.scheduler.submit(
                run_id, "end_run", lambda: self.engine.end_run(run_id)
            ),
        )
        check = config.check or config.check_report is not None
        self.checks = Checker(chat_tokens_for=self._check_chat_tokens) if check else None
        self._final_report: CheckReport | None = None
        # The default family's build: `trio-local run` starts its command once it is done.
        self.tokenizer_ready = self.tokenizers.ready(catalogue.QWEN3)
        self.closed = False
        self.telemetry_batches = 0  # SDK telemetry is accepted and counted, never stored
        # The use cases, over the parts above.
        models = ModelSetup(self.engine, self.tokenizers, config.models)
        self.checkpoints = Checkpoints(self.store, self.data_dir, self.secret)
        self.sessions = Sessions(self.store, self.liveness)
        self.training_runs = TrainingRuns(self.store, self.liveness, models, self.checkpoints)
        self.sampling_runs = SamplingRuns(self.store, models, self.checkpoints)
        self.trainer_events = TrainerEvents(
            self.store, self.liveness, self.scheduler, self.engine, self.checks
        )
        self.sampler = Sampler(self.scheduler, self.engine, self.checks)
        self.stats = Stats(self.scheduler, self.store, self.engine, self.checks)
        self.checkpoints.sweep_expired()

    def start_background_work(self) -> None:
        self.scheduler.start()
        self.liveness.start()
        self.tokenizers.start()
        self.engine.warm_up(self.config.warmup_entry)

    def stop(self) -> None:
        """Stop the service's threads before releasing the data directory. Nothing new begins
        after this: builds and loads not begun are dropped, and an import or build in progress
        ends at its next step, by itself (waiting for a half-done import of torch or a cold
        tokenizer build would hold up the exit of trio-mcp, whose client allows two seconds).
        Only a tokenizer copy into the data directory, which may be removed next, is waited
        for."""
        self.liveness.stop()
        self.scheduler.stop()
        self.tokenizers.stop()
        self.engine.close()
        self.finish_checks()
        self.store.close()
        self.lock.release()

    def _check_chat_tokens(self, model_id: str) -> ChatTokens | None:
        # The checker's own load, remembered next to the family's build in trio-local's cache:
        # the engine's tokenizer belongs to the scheduler's worker thread.
        from trio_local.engine.tokenizer import load_tokenizer

        try:
            family = catalogue.resolve(model_id).family
        except catalogue.ModelNotServed:
            family = catalogue.QWEN3
        directory = self.tokenizers.ready(family).result(120)
        return cached_chat_tokens(
            self.tokenizers.build_of(family), lambda: load_tokenizer(directory)
        )

    def finish_checks(self, timeout: float = 30.0) -> CheckReport | None:
        """The final check report (None without --check), written to --check-report once."""
        if self.checks is None:
            return None
        if self._final_report is None:
            if not self.checks.drain(timeout):
                logger.warning("trio-local check: the checker is still busy after %ss", timeout)
            self._final_report = self.checks.report()
            self.checks.close()
            path = self.config.check_report
            if path is not None:
                try:
                    self._final_report.write(path.expanduser())
                except OSError as error:
                    logger.error("trio-local check: cannot write %s: %s", path, error)
        return self._final_report

    def actor_token(self, run_id: str) -> tuple[str, float]:
        """A run's actor token and when it expires (the actor plane's credentials)."""
        return issue_actor_token(self.secret, run_id)

    def heartbeat(self, run_id: str) -> int:
        """A training client is alive; the answer is the interval of its next beat (ms)."""
        self.liveness.touch(run_id)
        return self.liveness.heartbeat_ms

    def storage_fault(self, error: BaseException) -> str | None:
        """A full disk or a read-only data dir named (None for any other error)."""
        return faults.describe(error, self.data_dir)

    def environment(self, base_url: str) -> dict[str, str]:
        """What a child process needs to run unmodified PyTRIO code against this service."""
        return {
            "PYTRIO_BASE_URL": base_url,
            "PYTRIO_API_KEY": self.api_key,
            "MODELSCOPE_CACHE": str(modelscope_cache()),
            "TRIO_LOCAL_STATS_URL": f"{base_url}{STATS_PATH}",
        }


def _unusable(error: OSError | sqlite3.Error, data_dir: Path) -> DataDirUnusable:
    message = faults.describe(error, data_dir)
    if message is None:
        message = f"cannot use the data directory {data_dir}: {error}"
    return DataDirUnusable(message)
