"""The engine's one entry point: trainer events and sample requests for every run.

Only the scheduler's worker thread runs events, so model state needs no locks. The exceptions
are `warm_up()` and `prepare()`: from the service's start the default model is built on a
builder thread (imports, seeded init or the weights cache, one throwaway training step) and its
tokenizer loaded, and when a run is created the control plane asks for its model the same way,
while the client is still loading its tokenizer; the worker picks finished models up from
futures, waiting for one still being built rather than building it again.
"""

from __future__ import annotations

import logging
import os
import queue
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytrio.protocol.actor.events.base import ProtocolPayload
from pytrio.protocol.actor.events.event import EventEnvelope, EventType
from pytrio.protocol.actor.events.trainer.init_run import TrainerInitRunPayload
from pytrio.protocol.actor.events.trainer.save import TrainerSavePayload
from pytrio.protocol.actor.sampling_run.sample import SampleRequest

from trio_local import catalogue
from trio_local.config import default_cache_dir
from trio_local.engine import checkpoint_load, sampling, trainer
from trio_local.engine.images import flatten
from trio_local.engine.libraries import import_model_libraries
from trio_local.engine.model import BASE_ADAPTER, LoraSpec, ModelHost
from trio_local.engine.trainer import TrainerRun
from trio_local.errors import STORAGE_CODE, EngineError, service_stopping
from trio_local.protocol.bounds import CHECKPOINT_NAME, CHECKPOINT_NAME_MAX, VALUE_REFUSED
from trio_local.protocol.events import EventOutcome
from trio_local.storage import checkpoints as ckpt_files
from trio_local.storage import faults
from trio_local.storage.db import Store, iso, new_cuid, now
from trio_local.storage.rows import CheckpointKind, CheckpointRow, TrainingRunStatus

if TYPE_CHECKING:
    from trio_local.config import ServeConfig
    from trio_local.engine.tokenizer import ServiceTokenizer
    from trio_local.tokenizers import Tokenizers

logger = logging.getLogger("trio_local")

SAMPLER_CACHE_SIZE = 8
# Base models kept in memory (~200-300 MB each) when no run uses them: a teacher and a student
# stay, a long series of one-off ids does not pile up.
IDLE_HOSTS = 3
PREBUILT_HOSTS = 2
WARMUP_NICE = 10


def checkpoint_uri(run_id: str, kind: CheckpointKind, name: str) -> str:
    return f"trio://{run_id}/{ckpt_files.KIND_DIRS[kind]}/{name}"


def model_unavailable(model_id: str, error: BaseException) -> EngineError:
    """The error a request gets when its model could not be set up (also by the warm-up)."""
    if isinstance(error, EngineError):
        return error
    hint = (
        "the model libraries (torch, transformers) come with trio-local's `local` extra: "
        "pip install 'pytrio-skill[local]'"
        if isinstance(error, ImportError)
        else "the trio-local service's log has the details"
    )
    return EngineError(
        "model_unavailable",
        f"trio-local could not set up its stand-in model for {model_id}: "
        f"{type(error).__name__}: {error}; {hint}",
    )


def _lower_priority(nice: int) -> None:
    """Make the calling thread yield the CPU to other work (Linux: per-thread nice value)."""
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + nice)
    except (AttributeError, OSError):  # elsewhere the warm-up simply runs at normal priority
        pass


class _Builder:
    """One daemon thread running build jobs in order (an executor's thread would hold up the
    process's exit until a half-done import of torch finished); with `nice`, at low priority."""

    def __init__(self, name: str, nice: int = 0) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[..., Any], tuple, Future] | None] = (
            queue.SimpleQueue()
        )
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._name = name
        self._nice = nice

    def submit(self, job: Callable[..., Any], *args: Any) -> Future:
        future: Future = Future()
        with self._lock:
            if self._closed:
                future.set_exception(service_stopping())
                return future
            self._jobs.put((job, args, future))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
        return future

    def close(self) -> None:
        """Fail the jobs not started yet and end the thread after the running one (a half-done
        import cannot be interrupted)."""
        with self._lock:
            self._closed = True
        while True:
            try:
                item = self._jobs.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                item[2].set_exception(service_stopping())
        self._jobs.put(None)  # wakes the thread, which then returns

    def _run(self) -> None:
        if self._nice:
            _lower_priority(self._nice)
        while True:
            item = self._jobs.get()
            if item is None:
                return
            job, args, future = item
            try:
                future.set_result(job(*args))
            except BaseException as error:  # the future carries it to the waiting worker
                future.set_exception(error)


class Engine:
    def __init__(
        self, store: Store, data_dir: Path, tokenizers: Tokenizers, config: ServeConfig
    ) -> None:
        self.store = store
        self.data_dir = data_dir
        self.tokenizers = tokenizers
        self.config = config
        self.threads = config.threads
        self._hosts: OrderedDict[str, ModelHost] = OrderedDict()  # model id -> base + adapters
        self._building: dict[str, Future] = {}
        self._build_lock = threading.Lock()
        self._builder = _Builder("trio-local-build")
        # The warm-up uses spare CPU only: on two cores it would otherwise slow the script's
        # own start-up (its imports and tokenizer loads) by as much as it saves.
        self._warm_builder = _Builder("trio-local-warm-up", nice=WARMUP_NICE)
        self._tokenizers: dict[str, ServiceTokenizer] = {}
        self.runs: dict[str, TrainerRun] = {}
        self._samplers: OrderedDict[str, tuple[str, str]] = OrderedDict()  # cuid -> id, adapter
        self._tokenizer_loads: dict[str, Future] = {}
        # Set by close(): background work not begun yet is dropped, and a build in progress
        # stops at its next step, so no model is built after the service stopped.
        self._closing = threading.Event()
        # Seeded stand-in weights, cached across restarts (None: always build).
        self.weights_cache: Path | None = (
            default_cache_dir() / "stand-ins" if config.weights_cache else None
        )
        self._warming: list[Future] = []  # the warm-up's jobs (empty: no warm-up)
        self._warm_model: str | None = None
        self.models_built = 0
        self.models_from_cache = 0
        # Where the service's first seconds went (served by /trio-local/stats).
        self.timings: dict[str, float] = {}

    # lazy heavy state
    def _time(self, name: str, started: float) -> None:
        self.timings.setdefault(name, round(time.perf_counter() - started, 3))

    def _import_torch(self) -> None:
        started = time.perf_counter()
        # Here, off the worker thread's first event.
        if not import_model_libraries("torch", stop=self._closing):
            raise service_stopping()
        import torch

        torch.set_num_threads(self.threads)
        self._time("import torch", started)

    def warm_up(self, entry: catalogue.CatalogueEntry | None) -> None:
        """Pay a first request's one-time costs in the background from the service's start:
        import the model libraries and, given `entry`, build (or load from the weights cache)
        its stand-in, run one throwaway training step through it and load its tokenizer. A
        request that arrives meanwhile waits for this work (`host`, `tokenizer`) instead of
        repeating it; a failure is raised to that request."""
        if entry is None:
            return
        self._warm_model = entry.model_id
        imported = self._warm_builder.submit(self._import_torch)
        self._warming.append(imported)
        with self._build_lock:
            future = self._warm_builder.submit(self._build, entry, True)
            self._building[entry.model_id] = future
            self._warming.append(future)
            self._warming.append(self._load_tokenizer_soon(entry.family))

    def warm_up_status(self) -> dict[str, Any]:
        """Served at /trio-local/stats: off, warming, ready or failed (with the error)."""
        status: dict[str, Any] = {
            "model": self._warm_model,
            "models_built": self.models_built,
            "models_from_cache": self.models_from_cache,
        }
        if not self._warming:
            return {"state": "off", **status}
        for future in self._warming:
            if not future.done():
                return {"state": "warming", **status}
            error = future.exception()
            if error is not None:
                return {"state": "failed", "error": f"{type(error).__name__}: {error}", **status}
        return {"state": "ready", **status}

    def close(self) -> None:
        """Begin no more work: the warm-up's, builds' and tokenizer loads' jobs not begun are
        dropped (their waiters get `service_stopping`) and the running ones end at their next
        step, on their own daemon threads."""
        self._closing.set()
        self._builder.close()
        self._warm_builder.close()

    def _build(self, entry: catalogue.CatalogueEntry, exercise: bool = False) -> ModelHost:
        self._import_torch()
        if self._closing.is_set():
            raise service_stopping()
        started = time.perf_counter()
        host = ModelHost(entry.spec, cache_dir=self.weights_cache)
        if host.from_cache:
            self.models_from_cache += 1
            self._time("first base model load (weights cache)", started)
        else:
            self.models_built += 1
            self._time("first base model build", started)
        if exercise and not self._closing.is_set():
            started = time.perf_counter()
            host.exercise()
            self._time("warm-up training step", started)
        return host

    def prepare(self, entry: catalogue.CatalogueEntry, *, on_demand: bool = False) -> None:
        """Start building `entry`'s model on the builder thread (any thread may call this)."""
        with self._build_lock:
            if entry.model_id in self._hosts or entry.model_id in self._building:
                return
            # Ahead-of-time builds nobody picked up yet are bounded (a run may never start).
            if len(self._building) >= PREBUILT_HOSTS and not on_demand:
                return
            self._building[entry.model_id] = self._builder.submit(self._build, entry)

    def host(self, entry: catalogue.CatalogueEntry) -> ModelHost:
        host = self._hosts.get(entry.model_id)
        if host is None:
            self.prepare(entry, on_demand=True)
            with self._build_lock:
                future = self._building[entry.model_id]
            try:
                host = future.result()
            except Exception as error:
                with self._build_lock:  # the next request tries again
                    if self._building.get(entry.model_id) is future:
                        del self._building[entry.model_id]
                raise model_unavailable(entry.model_id, error) from error
            with self._build_lock:
                self._building.pop(entry.model_id, None)
            self._hosts[entry.model_id] = host
            self._evict()
        self._hosts.move_to_end(entry.model_id)
        return host

    def _evict(self) -> None:
        in_use = {run.model_id for run in self.runs.values()}
        idle = [model_id for model_id in self._hosts if model_id not in in_use]
        for model_id in idle[: max(len(idle) - IDLE_HOSTS, 0)]:
            del self._hosts[model_id]
            for cuid, (owner, _) in list(self._samplers.items()):
                if owner == model_id:
                    del self._samplers[cuid]

    def _load_tokenizer(self, family: catalogue.Family) -> ServiceTokenizer:
        from trio_local.engine.tokenizer import ServiceTokenizer

        self.tokenizers.ready(family).result()
        started = time.perf_counter()
        tokenizer = ServiceTokenizer(self.tokenizers.directory(family))
        self._time(f"{family.name} tokenizer load", started)
        return tokenizer

    def _load_tokenizer_soon(self, family: catalogue.Family) -> Future:
        # Its own thread, so that a build queued on the builder need not wait for it, nor run
        # creation (which needs the tokenizer) for the import of torch.
        future: Future = Future()

        def load() -> None:
            _lower_priority(WARMUP_NICE)
            try:
                if self._closing.is_set():
                    raise service_stopping()
                future.set_result(self._load_tokenizer(family))
            except BaseException as error:
                future.set_exception(error)

        threading.Thread(target=load, name="trio-local-tokenizer-load", daemon=True).start()
        self._tokenizer_loads[family.name] = future
        return future

    def tokenizer(self, family: catalogue.Family) -> ServiceTokenizer:
        if family.name not in self._tokenizers:
            with self._build_lock:
                loading = self._tokenizer_loads.pop(family.name, None)
            tokenizer = None
            if loading is not None:
                try:
                    tokenizer = loading.result()
                except Exception:  # loaded again below, which raises the error itself
                    logger.warning(
                        "trio-local: preloading the %s tokenizer failed", family.name, exc_info=True
                    )
            self._tokenizers[family.name] = tokenizer or self._load_tokenizer(family)
        return self._tokenizers[family.name]

    # trainer events
    def handle_event(self, envelope: EventEnvelope, payload: ProtocolPayload) -> EventOutcome:
        try:
            return self._handle_event(envelope, payload)
        except (OSError, sqlite3.Error) as error:
            message = faults.describe(error, self.data_dir)
            if message is None:
                raise
            raise EngineError(STORAGE_CODE, f"trio-local {message}") from error

    def _handle_event(self, envelope: EventEnvelope, payload: ProtocolPayload) -> EventOutcome:
        run_id = envelope.metadata.run_id
        if envelope.type == EventType.TRAINER_INIT_RUN:
            return self._init_run(run_id, payload)
        run = self.runs.get(run_id)
        if run is None:
            raise EngineError(
                "run_not_initialized",
                f"training run {run_id} has no weights in this trio-local process (the service "
                "restarted since it was created); resume it from a checkpoint with "
                "create_training_client_from_state",
            )
        if envelope.type in (EventType.TRAINER_FORWARD, EventType.TRAINER_FORWARD_BACKWARD):
            backward = envelope.type == EventType.TRAINER_FORWARD_BACKWARD
            result = trainer.forward(run, payload, backward=backward)
        elif envelope.type == EventType.TRAINER_OPTIMIZE_STEP:
            result = trainer.optimize_step(run, payload)
        elif envelope.type == EventType.TRAINER_SAVE_STATE:
            result = self._save(run, payload, CheckpointKind.TRAINING)
        elif envelope.type == EventType.TRAINER_SAVE_WEIGHTS:
            result = self._save(run, payload, CheckpointKind.SAMPLER)
        elif envelope.type == EventType.TRAINER_END_RUN:
            self.end_run(run_id)
            result = {}
        else:  # pragma: no cover - the envelope model admits only the types above
            raise EngineError("unsupported_event", f"unsupported event type {envelope.type}")
        return EventOutcome(result=result, usage=run.usage)

    def _init_run(self, run_id: str, payload: TrainerInitRunPayload) -> EventOutcome:
        try:
            # The control plane already applied --models when it created the run.
            entry = catalogue.resolve(payload.base_model)
        except catalogue.ModelNotServed as error:
            raise EngineError("model_not_found", str(error)) from None
        lora = LoraSpec(
            rank=payload.lora_config.rank,
            seed=payload.lora_config.seed,
            train_mlp=payload.lora_config.train_mlp,
            train_attn=payload.lora_config.train_attn,
            train_unembed=payload.lora_config.train_unembed,
        )
        self.end_run(run_id)
        host = self.host(entry)
        started = time.perf_counter()
        host.add_adapter(run_id, lora)
        self._time("first LoRA adapter", started)
        run = TrainerRun(
            run_id=run_id,
            model_id=entry.model_id,
            lora=lora,
            host=host,
            image_pad_id=entry.family.image_pad_id,
            limits=self.config.trainer_limits,
        )
        self.runs[run_id] = run
        if payload.checkpoint_uri:
            try:
                self._restore(run, payload.checkpoint_uri, with_optimizer=payload.load_optimizer)
            except BaseException:
                # Never leave a fresh adapter behind that later events would silently train.
                self.end_run(run_id)
                raise
        if not self.store.move_training_run(
            run_id, TrainingRunStatus.RUNNING, stamp_column="started_at"
        ):
            # Ended (client gone, session closed, restart) while this event waited: an ended
            # run never comes back, or it would hold a slot past --max-runs.
            self.end_run(run_id)
            raise EngineError(
                "training_run_ended",
                f"training run {run_id} has ended; create a new training client (or resume "
                "from a checkpoint with create_training_client_from_state)",
            )
        run.usage = {"input_tokens": 0, "output_tokens": 0, "train_tokens": 0}
        return EventOutcome(result={"run_id": run_id, "model_id": entry.model_id}, usage=run.usage)

    def _checkpoint_row(self, uri: str, what: str = "no checkpoint at") -> CheckpointRow:
        row = self.store.checkpoint_by_uri(uri)
        if row is None:
            raise EngineError("checkpoint_not_found", f"{what} {uri}")
        return row

    def _restore(self, run: TrainerRun, uri: str, *, with_optimizer: bool) -> None:
        loaded = checkpoint_load.load(
            self.data_dir,
            self._checkpoint_row(uri),
            run.host,
            model_id=run.model_id,
            with_optimizer=with_optimizer,
        )
        if loaded.lora != run.lora:
            raise EngineError(
                "checkpoint_config_mismatch",
                f"checkpoint {uri} was trained with a different LoRA configuration",
            )
        run.host.load_state(run.adapter, loaded.adapter)
        if loaded.optimizer is not None and loaded.trainer_state is not None:
            trainer.restore_optimizer(run, loaded.optimizer, loaded.trainer_state)
            run.optim_steps = loaded.trainer_state["optim_steps"]

    def _save(
        self, run: TrainerRun, payload: TrainerSavePayload, kind: CheckpointKind
    ) -> dict[str, Any]:
        name = payload.name
        if len(name) > CHECKPOINT_NAME_MAX or CHECKPOINT_NAME.fullmatch(name) is None:
            raise EngineError(
                "invalid_checkpoint_name",
                f"checkpoint name '{name}' must match {CHECKPOINT_NAME.pattern} and be at most "
                f"{CHECKPOINT_NAME_MAX} characters",
            )
        uri = checkpoint_uri(run.run_id, kind, name)
        existing = self.store.checkpoint_by_uri(uri)
        if existing is not None and not payload.overwrite:
            raise EngineError(
                "checkpoint_exists",
                f"run {run.run_id} already has a checkpoint named '{name}'; choose another name "
                "or save with overwrite",
            )
        lora = run.lora
        adapter_config = {
            "peft_type": "LORA",
            "r": lora.rank,
            "lora_alpha": catalogue.LORA_ALPHA,
            "lora_dropout": 0.0,
            "bias": "none",
            "target_modules": lora.target_modules(),
            "base_model_name_or_path": run.model_id,
            "task_type": "CAUSAL_LM",
            "trio_local": {"lora": lora.__dict__, "model_id": run.model_id},
        }
        data = ckpt_files.CheckpointData(
            adapter=run.host.state(run.adapter), adapter_config=adapter_config
        )
        if kind == CheckpointKind.TRAINING:
            tensors, meta = trainer.optimizer_tensors(run)
            data.optimizer = tensors
            data.trainer_state = {**meta, "optim_steps": run.optim_steps}
        created = now()
        expires = created + timedelta(seconds=payload.ttl_seconds) if payload.ttl_seconds else None
        cuid = existing.cuid if existing else new_cuid("ck")
        saved = ckpt_files.save_checkpoint(
            self.store,
            self.data_dir,
            CheckpointRow(
                cuid=cuid,
                run_cuid=run.run_id,
                name=name,
                kind=kind,
                uri=uri,
                path=ckpt_files.relative_dir(run.run_id, kind, name),
                step=run.optim_steps,
                size_bytes=0,  # measured once the files are written
                lora_rank=lora.rank,
                model_id=run.model_id,
                created_at=iso(created),
                expires_at=iso(expires) if expires else None,
            ),
            data,
            overwrite=payload.overwrite,
        )
        size = saved.size_bytes
        self._samplers.pop(cuid, None)  # an overwrite invalidates a cached sampler adapter
        run.usage = {"input_tokens": 0, "output_tokens": 0, "train_tokens": 0}
        return {
            "checkpoint": {
                "uri": uri,
                "size_bytes": size,
                "model_id": run.model_id,
                "checkpoint_cuid": cuid,
                "cuid": cuid,
            }
        }

    def end_run(self, run_id: str) -> None:
        run = self.runs.pop(run_id, None)
        if run is not None:
            run.host.remove_adapter(run.adapter)

    # sampling
    def _sampler_adapter(self, entry: catalogue.CatalogueEntry, checkpoint_uri: str | None) -> str:
        if not checkpoint_uri:
            return BASE_ADAPTER
        row = self._checkpoint_row(checkpoint_uri, "the sampler's checkpoint no longer exists:")
        cached = self._samplers.get(row.cuid)
        if cached is not None:
            self._samplers.move_to_end(row.cuid)
            return cached[1]
        host = self.host(entry)
        # Checked whole before the adapter is made: a refusal allocates nothing.
        loaded = checkpoint_load.load(self.data_dir, row, host, model_id=entry.model_id)
        adapter = f"s_{row.cuid}"
        host.add_adapter(adapter, loaded.lora)
        try:
            host.load_state(adapter, loaded.adapter)
        except BaseException:
            host.remove_adapter(adapter)
            raise
        self._samplers[row.cuid] = (entry.model_id, adapter)
        while len(self._samplers) > SAMPLER_CACHE_SIZE:
            _, (model_id, old) = self._samplers.popitem(last=False)
            if model_id in self._hosts:
                self._hosts[model_id].remove_adapter(old)
        return adapter

    def sample(
        self, model_id: str, checkpoint_uri: str | None, request: SampleRequest
    ) -> dict[str, Any]:
        try:
            entry = catalogue.resolve(model_id)
        except catalogue.ModelNotServed as error:
            raise EngineError("model_not_found", str(error)) from None
        flat = flatten(
            request.prompt.chunks,
            "prompt",
            vocab_size=entry.family.embedding_rows,
            image_pad_id=entry.family.image_pad_id,
            model_id=entry.model_id,
        )
        prompt = flat.ids
        options = sampling.SamplingOptions.from_wire(request.sampling_params)
        limits = self.config.sampler_limits
        if len(prompt) + options.max_tokens > limits.max_seq_len:
            raise EngineError(
                "sample_too_long",
                f"prompt ({len(prompt)} tokens) + max_tokens ({options.max_tokens}) exceeds the "
                f"local sampler's {limits.max_seq_len}-token limit; lower max_tokens, shorten "
                "the prompt, or start trio-local with a larger --max-sample-len",
            )
        if request.num_samples > limits.max_batch_size:
            raise EngineError(
                VALUE_REFUSED,
                f"num_samples is {request.num_samples}; the local sampler allows at most "
                f"{limits.max_batch_size} per request",
            )
        host = self.host(entry)
        host.activate(self._sampler_adapter(entry, checkpoint_uri))
        tokenizer = self.tokenizer(entry.family)
        response: dict[str, Any] = {"request_id": request.request_id}
        if request.return_prompt_logprobs or request.topk_prompt_logprobs:
            if flat.images:
                raise EngineError(
                    "image_logprobs_unsupported",
                    "prompt logprobs are not computed for prompts with image chunks",
                )
            scores, top = sampling.prompt_logprobs(host, prompt, request.topk_prompt_logprobs)
            response["prompt_logprobs"] = scores if request.return_prompt_logprobs else None
            response["topk_prompt_logprobs"] = top
        sequences = sampling.generate(
            host,
            tokenizer,
            flat,
            options=options,
            num_samples=request.num_samples,
            eos_ids=(entry.family.eos_id, entry.family.pad_id),
        )
        response["sequences"] = [
            {
                "tokens": seq.tokens,
                # Like vLLM's default: the text leaves out special tokens such as <|im_end|>.
                "text": (
                    tokenizer.decode(seq.tokens, skip_special_tokens=True)
                    if request.return_text
                    else None
                ),
                "logprobs": seq.logprobs if request.return_token_logprobs else [],
                "stop_reason": seq.stop_reason,
            }
            for seq in sequences
        ]
        response["usage"] = {
            "input_tokens": len(prompt),
            "output_tokens": sum(len(seq.tokens) for seq in sequences),
        }
        return response
