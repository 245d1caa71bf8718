"""The engine's one entry point: trainer events and sample requests for every run.

Only the scheduler's worker thread calls it, so model state needs no locks.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from pytrio.protocol.actor.events.event import EventEnvelope, EventType
from pytrio.protocol.actor.events.trainer.init_run import TrainerInitRunPayload
from pytrio.protocol.actor.events.trainer.save import TrainerSavePayload
from pytrio.protocol.actor.sampling_run.sample import SampleRequest

from trio_local import catalogue
from trio_local.engine import sampling, trainer
from trio_local.engine.errors import EngineError
from trio_local.engine.model import BASE_ADAPTER, LoraSpec, ModelHost
from trio_local.engine.trainer import TrainerRun
from trio_local.protocol.bounds import CHECKPOINT_NAME, CHECKPOINT_NAME_MAX
from trio_local.storage import checkpoints as ckpt_files
from trio_local.storage.db import Store, iso, new_cuid, now

SAMPLER_CACHE_SIZE = 8
EOS_IDS = (151645, 151643)  # <|im_end|>, <|endoftext|>


@dataclass(frozen=True)
class EventOutcome:
    result: dict[str, Any]
    usage: dict[str, int]


def checkpoint_uri(run_id: str, kind: str, name: str) -> str:
    return f"trio://{run_id}/{'weights' if kind == 'TRAINING' else 'sampler_weights'}/{name}"


class Engine:
    def __init__(self, store: Store, data_dir: Path, tokenizer_dir: Path, threads: int) -> None:
        self.store = store
        self.data_dir = data_dir
        self.tokenizer_dir = tokenizer_dir
        self.threads = threads
        self._host: ModelHost | None = None
        self._tokenizer: Any = None
        self.runs: dict[str, TrainerRun] = {}
        self._samplers: OrderedDict[str, str] = OrderedDict()  # checkpoint cuid -> adapter

    # lazy heavy state
    def host(self) -> ModelHost:
        if self._host is None:
            import torch

            torch.set_num_threads(self.threads)
            self._host = ModelHost(catalogue.STAND_IN)
        return self._host

    def tokenizer(self) -> Any:
        if self._tokenizer is None:
            from trio_local.engine.tokenizer import load_tokenizer

            self._tokenizer = load_tokenizer(self.tokenizer_dir)
        return self._tokenizer

    # trainer events
    def handle_event(self, envelope: EventEnvelope, payload: Any) -> EventOutcome:
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
            result = self._save(run, payload, "TRAINING")
        elif envelope.type == EventType.TRAINER_SAVE_WEIGHTS:
            result = self._save(run, payload, "SAMPLER")
        elif envelope.type == EventType.TRAINER_END_RUN:
            self.end_run(run_id)
            result = {}
        else:  # pragma: no cover - the envelope model admits only the types above
            raise EngineError("unsupported_event", f"unsupported event type {envelope.type}")
        return EventOutcome(result=result, usage=run.usage)

    def _init_run(self, run_id: str, payload: TrainerInitRunPayload) -> EventOutcome:
        entry = catalogue.find(payload.base_model)
        if entry is None:
            raise EngineError(
                "model_not_found",
                f"unknown base_model '{payload.base_model}'; available: "
                f"{', '.join(catalogue.known_ids())}",
            )
        lora = LoraSpec(
            rank=payload.lora_config.rank,
            seed=payload.lora_config.seed,
            train_mlp=payload.lora_config.train_mlp,
            train_attn=payload.lora_config.train_attn,
            train_unembed=payload.lora_config.train_unembed,
        )
        host = self.host()
        self.end_run(run_id)
        host.add_adapter(run_id, lora)
        run = TrainerRun(run_id=run_id, model_id=entry.model_id, lora=lora, host=host)
        self.runs[run_id] = run
        if payload.checkpoint_uri:
            try:
                self._restore(run, payload.checkpoint_uri, with_optimizer=payload.load_optimizer)
            except BaseException:
                # Never leave a fresh adapter behind that later events would silently train.
                self.end_run(run_id)
                raise
        if not self.store.move_training_run(run_id, "RUNNING", stamp_column="started_at"):
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

    def _checkpoint_dir(self, row: dict[str, Any]) -> Path:
        return ckpt_files.resolve(self.data_dir, row["path"])

    def _restore(self, run: TrainerRun, uri: str, *, with_optimizer: bool) -> None:
        row = self.store.checkpoint_by_uri(uri)
        if row is None or not self._checkpoint_dir(row).is_dir():
            raise EngineError("checkpoint_not_found", f"no checkpoint at {uri}")
        data = ckpt_files.read_checkpoint(self._checkpoint_dir(row))
        saved = data.adapter_config.get("trio_local", {}).get("lora")
        if saved is None or LoraSpec(**saved) != run.lora:
            raise EngineError(
                "checkpoint_config_mismatch",
                f"checkpoint {uri} was trained with a different LoRA configuration",
            )
        run.host.load_state(run.adapter, data.adapter)
        if with_optimizer:
            if data.optimizer is None or data.trainer_state is None:
                raise EngineError(
                    "checkpoint_has_no_optimizer",
                    f"{uri} is a sampler checkpoint without optimizer state; load it without "
                    "the optimizer, or save with save_state",
                )
            trainer.restore_optimizer(run, data.optimizer, data.trainer_state)
            run.optim_steps = int(data.trainer_state.get("optim_steps", 0))

    def _save(self, run: TrainerRun, payload: TrainerSavePayload, kind: str) -> dict[str, Any]:
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
        if kind == "TRAINING":
            tensors, meta = trainer.optimizer_tensors(run)
            data.optimizer = tensors
            data.trainer_state = {**meta, "optim_steps": run.optim_steps}
        created = now()
        expires = created + timedelta(seconds=payload.ttl_seconds) if payload.ttl_seconds else None
        cuid = existing["cuid"] if existing else new_cuid("ck")
        saved = ckpt_files.save_checkpoint(
            self.store,
            self.data_dir,
            {
                "cuid": cuid,
                "run_cuid": run.run_id,
                "name": name,
                "kind": kind,
                "uri": uri,
                "path": ckpt_files.relative_dir(run.run_id, kind, name),
                "step": run.optim_steps,
                "lora_rank": lora.rank,
                "model_id": run.model_id,
                "created_at": iso(created),
                "expires_at": iso(expires) if expires else None,
            },
            data,
            overwrite=payload.overwrite,
        )
        size = saved["size_bytes"]
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
    def _sampler_adapter(self, checkpoint_uri: str | None) -> str:
        if not checkpoint_uri:
            return BASE_ADAPTER
        row = self.store.checkpoint_by_uri(checkpoint_uri)
        if row is None or not self._checkpoint_dir(row).is_dir():
            raise EngineError(
                "checkpoint_not_found",
                f"the sampler's checkpoint {checkpoint_uri} no longer exists",
            )
        adapter = self._samplers.get(row["cuid"])
        if adapter is not None:
            self._samplers.move_to_end(row["cuid"])
            return adapter
        data = ckpt_files.read_checkpoint(self._checkpoint_dir(row))
        saved = data.adapter_config.get("trio_local", {}).get("lora")
        if not saved:
            raise EngineError("checkpoint_invalid", f"{checkpoint_uri} has no LoRA settings")
        adapter = f"s_{row['cuid']}"
        host = self.host()
        host.add_adapter(adapter, LoraSpec(**saved))
        host.load_state(adapter, data.adapter)
        self._samplers[row["cuid"]] = adapter
        while len(self._samplers) > SAMPLER_CACHE_SIZE:
            _, old = self._samplers.popitem(last=False)
            host.remove_adapter(old)
        return adapter

    def sample(self, checkpoint_uri: str | None, request: SampleRequest) -> dict[str, Any]:
        prompt: list[int] = []
        for chunk in request.prompt.chunks:
            if chunk.type != "encoded_text":
                raise EngineError(
                    "unsupported_input", "the local stand-in model reads text prompts only"
                )
            prompt.extend(chunk.tokens)
        vocab = catalogue.STAND_IN.vocab_size
        bad = [token for token in prompt if not 0 <= token < vocab]
        if bad:
            raise EngineError(
                "token_id_out_of_range", f"prompt token {bad[0]} is outside [0, {vocab})"
            )
        options = sampling.SamplingOptions.from_wire(request.sampling_params)
        limits = catalogue.SAMPLER_LIMITS
        if len(prompt) + options.max_tokens > limits.max_seq_len:
            raise EngineError(
                "sample_too_long",
                f"prompt ({len(prompt)} tokens) + max_tokens ({options.max_tokens}) exceeds the "
                f"local sampler's {limits.max_seq_len}-token limit; lower max_tokens or shorten "
                "the prompt",
            )
        if request.num_samples > limits.max_batch_size:
            raise EngineError(
                "invalid_request_body",
                f"num_samples is {request.num_samples}; the local sampler allows at most "
                f"{limits.max_batch_size} per request",
            )
        host = self.host()
        host.activate(self._sampler_adapter(checkpoint_uri))
        tokenizer = self.tokenizer()
        response: dict[str, Any] = {"request_id": request.request_id}
        if request.return_prompt_logprobs or request.topk_prompt_logprobs:
            scores, top = sampling.prompt_logprobs(host.model, prompt, request.topk_prompt_logprobs)
            response["prompt_logprobs"] = scores if request.return_prompt_logprobs else None
            response["topk_prompt_logprobs"] = top
        sequences = sampling.generate(
            host.model,
            tokenizer,
            prompt,
            options=options,
            num_samples=request.num_samples,
            eos_ids=EOS_IDS,
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
