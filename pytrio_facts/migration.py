"""What changed between pytrio 0.1.x (0.1.13) and 0.2.x (0.2.9), with the 0.2 replacement."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ChangeKind = Literal["removed", "changed", "added"]


@dataclass(frozen=True)
class Change:
    kind: ChangeKind
    old: str
    new: str
    note: str = ""


MIGRATION: tuple[Change, ...] = (
    Change(
        "changed",
        'metrics["loss:sum"] (server-defined)',
        'metrics["loss_sum"]',
        "0.2 builds metrics itself: loss_sum, loss_mean, token_count",
    ),
    Change(
        "removed",
        "SamplingParams(ignore_eos=True)",
        "SamplingParams(max_tokens=N)",
        "max_tokens > 0 is required on every sample call",
    ),
    Change(
        "removed",
        "create_lora_training_client(trainable_token_indices=..., lora_path=...)",
        "create_lora_training_client(base_model, rank=...)",
        "resume with create_training_client_from_state(path) or load_state(path)",
    ),
    Change(
        "changed",
        "train_unembed default False",
        "train_unembed default True",
        "pass train_unembed=False to keep 0.1 behaviour; load_state checks it matches",
    ),
    Change(
        "changed",
        "ServiceClient.create_sampling_client(model_path=...)",
        "create_sampling_client(base_model, model_path=None)",
        "base_model is required; or TrainingClient.create_sampling_client(model_path)",
    ),
    Change(
        "changed",
        "save_weights_and_get_sampling_client(name)",
        "save_weights_and_get_sampling_client()",
        "no arguments; saves temporary weights (6 h TTL)",
    ),
    Change(
        "changed",
        "await (await sampler.sample_async(...))",
        "await sampler.sample_async(...)",
        "sample_async and compute_logprobs_async return the value",
    ),
    Change(
        "changed", "compute_logprobs(...) -> dict", "compute_logprobs(...) -> list[float | None]"
    ),
    Change("removed", "rest.list_weights()", "rest.list_user_checkpoints().result()"),
    Change(
        "removed",
        "rest.get_archive_url(id)",
        "rest.get_checkpoint_archive_url(checkpoint_id).result()",
    ),
    Change(
        "changed",
        "rest.get_checkpoint_archive_url(training_run_id, checkpoint_id)",
        "rest.get_checkpoint_archive_url(checkpoint_id)",
    ),
    Change(
        "removed",
        "rest.get_user_info() / rest.get_checkpoint_info(...)",
        "ServiceClient attributes / rest.list_checkpoints(run_id).result()",
    ),
    Change(
        "changed",
        "RestClient methods return dict",
        "return concurrent.futures.Future[model]",
        "call .result() and read attributes: .training_runs, .checkpoints, .cursor.total_count",
    ),
    Change("removed", "APIFuture.map_model / map_dict", "APIFuture.map(fn)"),
    Change("removed", ".elapsed_time on results", "time the call yourself"),
    Change(
        "removed",
        "pytrio.SampleInput / ServiceParams / pytrio.lib.* / pytrio._utils.*",
        "trio.Datum and the top-level names",
    ),
    Change("removed", "pytrio.config.settings.api_key = ...", "trio.configure(api_key=...)"),
    Change(
        "changed",
        "errors are ValueError",
        "errors derive from trio.PyTrioError",
        "input checks still raise ValueError: catch both",
    ),
    Change(
        "changed",
        "ServiceClient() prompts for a key",
        "ServiceClient() raises AuthError",
        "run trio login or set PYTRIO_API_KEY",
    ),
    Change("changed", "host pytrio.cn", "host https://pytrio.com"),
    Change("changed", "Socket.IO transport", "HTTPS + msgpack, retried for up to 15 min"),
    Change("added", "-", "AdamParams(grad_clip_norm=...)"),
    Change("added", "-", 'loss_fn="cispo" and loss_fn="dro"'),
    Change("added", "-", "TrainingClient.load_state(path) / load_state_with_optimizer(path)"),
    Change("added", "-", "save_state(name, ttl_seconds=None, overwrite=False)"),
    Change("added", "-", "sample(..., return_text=True); SampleSequence.text may be None"),
    Change("added", "-", "forward_backward_custom(..., loss_fn_config=...)"),
    Change("added", "-", "RestClient *_async methods, download_checkpoint, access_scope"),
    Change("added", "-", "trio.configure(...), trio env, PYTRIO_* environment variables"),
    Change("added", "-", "get_server_capabilities(), trio.ImageChunk"),
)

# Names that exist in 0.1.13 and not in 0.2.9, per object (checked with hasattr in tests).
REMOVED_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "pytrio": ("SampleInput", "ServiceParams"),
    "RestClient": ("list_weights", "get_archive_url", "get_user_info", "get_checkpoint_info"),
    "APIFuture": ("map_model", "map_dict"),
    "SamplingParams": ("ignore_eos",),
}
REMOVED_KEYWORDS: dict[str, tuple[str, ...]] = {
    "ServiceClient.create_lora_training_client": ("trainable_token_indices", "lora_path"),
    "TrainingClient.save_weights_and_get_sampling_client": ("name",),
}
