"""The public API surface of pytrio 0.2.9: which call returns what, and how to wait for it.

Three return kinds matter when writing PyTRIO code:
- ``api_future``: a ``trio.types.APIFuture``; call ``.result()`` (sync) or ``await`` it.
  The ``*_async`` twins of these are coroutines that return the APIFuture, so two awaits.
- ``concurrent_future``: a ``concurrent.futures.Future`` (RestClient sync methods); ``.result()``.
- ``value``: the value itself (clients, lists; on 0.2.9 also ``sample_async`` and
  ``compute_logprobs_async``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ClientName = Literal["ServiceClient", "TrainingClient", "SamplingClient", "RestClient"]
ReturnKind = Literal["api_future", "concurrent_future", "value"]


@dataclass(frozen=True)
class MethodFact:
    """One public method: parameter names in order (without self) and what it returns."""

    owner: ClientName
    name: str
    params: tuple[str, ...]
    returns: ReturnKind
    result: str

    @property
    def is_async(self) -> bool:
        return self.name.endswith("_async")

    @property
    def awaits(self) -> int:
        """Awaits needed to reach the result (0 for sync methods)."""
        if not self.is_async:
            return 0
        return 2 if self.returns == "api_future" else 1

    @property
    def how_to_wait(self) -> str:
        if self.is_async:
            return "await (await ...)" if self.awaits == 2 else "await ..."
        return ".result()" if self.returns != "value" else "returns the value"


def _pair(  # noqa: PLR0917 - one row of a table, read positionally
    owner: ClientName,
    name: str,
    params: tuple[str, ...],
    sync: ReturnKind,
    async_: ReturnKind | None,
    result: str,
) -> tuple[MethodFact, ...]:
    facts = [MethodFact(owner, name, params, sync, result)]
    if async_ is not None:
        facts.append(MethodFact(owner, f"{name}_async", params, async_, result))
    return tuple(facts)


_FB = ("data", "loss_fn", "loss_fn_config", "auto_shift")

API_SURFACE: tuple[MethodFact, ...] = (
    # ServiceClient: everything returns values (clients, lists, capabilities).
    *_pair("ServiceClient", "get_supported_models", (), "value", None, "list[str]"),
    *_pair(
        "ServiceClient",
        "get_server_capabilities",
        (),
        "value",
        "value",
        "GetServerCapabilitiesResponse",
    ),
    *_pair(
        "ServiceClient",
        "create_lora_training_client",
        ("base_model", "rank", "seed", "train_mlp", "train_attn", "train_unembed"),
        "value",
        "value",
        "TrainingClient",
    ),
    *_pair(
        "ServiceClient",
        "create_sampling_client",
        ("base_model", "model_path"),
        "value",
        "value",
        "SamplingClient",
    ),
    *_pair(
        "ServiceClient",
        "create_training_client_from_state",
        ("path",),
        "value",
        "value",
        "TrainingClient",
    ),
    *_pair(
        "ServiceClient",
        "create_training_client_from_state_with_optimizer",
        ("path",),
        "value",
        "value",
        "TrainingClient",
    ),
    *_pair("ServiceClient", "create_rest_client", (), "value", None, "RestClient"),
    # TrainingClient: training and save calls return APIFutures right after enqueueing.
    *_pair("TrainingClient", "forward", _FB, "api_future", "api_future", "ForwardBackwardOutput"),
    *_pair(
        "TrainingClient",
        "forward_backward",
        _FB,
        "api_future",
        "api_future",
        "ForwardBackwardOutput",
    ),
    *_pair(
        "TrainingClient",
        "forward_backward_custom",
        ("data", "loss_fn", "loss_fn_config"),
        "api_future",
        "api_future",
        "ForwardBackwardOutput",
    ),
    *_pair(
        "TrainingClient",
        "optim_step",
        ("adam_params",),
        "api_future",
        "api_future",
        "OptimStepResponse",
    ),
    *_pair(
        "TrainingClient",
        "save_state",
        ("name", "ttl_seconds", "overwrite"),
        "api_future",
        "api_future",
        "SaveWeightsResponse",
    ),
    *_pair(
        "TrainingClient",
        "save_weights_for_sampler",
        ("name", "ttl_seconds"),
        "api_future",
        "api_future",
        "SaveWeightsForSamplerResponse",
    ),
    *_pair("TrainingClient", "load_state", ("path",), "api_future", "api_future", "dict"),
    *_pair(
        "TrainingClient",
        "load_state_with_optimizer",
        ("path",),
        "api_future",
        "api_future",
        "dict",
    ),
    *_pair(
        "TrainingClient",
        "create_sampling_client",
        ("model_path",),
        "value",
        "value",
        "SamplingClient",
    ),
    *_pair(
        "TrainingClient",
        "save_weights_and_get_sampling_client",
        (),
        "value",
        "value",
        "SamplingClient",
    ),
    *_pair("TrainingClient", "get_tokenizer", (), "value", None, "tokenizer"),
    # SamplingClient: sync returns an APIFuture, async returns the value (one await).
    *_pair(
        "SamplingClient",
        "sample",
        (
            "prompt",
            "num_samples",
            "sampling_params",
            "include_prompt_logprobs",
            "topk_prompt_logprobs",
            "return_text",
        ),
        "api_future",
        "value",
        "SampleResponse",
    ),
    *_pair(
        "SamplingClient",
        "compute_logprobs",
        ("prompt",),
        "api_future",
        "value",
        "list[float | None]",
    ),
    *_pair("SamplingClient", "get_tokenizer", (), "value", None, "tokenizer"),
    # RestClient: sync returns concurrent.futures.Future, async returns the value.
    *_pair(
        "RestClient",
        "get_training_run",
        ("training_run_id", "access_scope"),
        "concurrent_future",
        "value",
        "TrainingRun",
    ),
    *_pair(
        "RestClient",
        "list_training_runs",
        ("limit", "offset", "access_scope"),
        "concurrent_future",
        "value",
        "TrainingRunsResponse",
    ),
    *_pair(
        "RestClient",
        "list_checkpoints",
        ("training_run_id",),
        "concurrent_future",
        "value",
        "CheckpointsListResponse",
    ),
    *_pair(
        "RestClient",
        "list_user_checkpoints",
        ("limit", "offset"),
        "concurrent_future",
        "value",
        "CheckpointsListResponse",
    ),
    *_pair(
        "RestClient",
        "get_checkpoint_archive_url",
        ("checkpoint_id",),
        "concurrent_future",
        "value",
        "CheckpointArchiveUrlResponse",
    ),
    *_pair(
        "RestClient",
        "get_checkpoint_download_url",
        ("checkpoint_id",),
        "concurrent_future",
        "value",
        "CheckpointDownloadSource",
    ),
    *_pair(
        "RestClient",
        "download_checkpoint",
        ("checkpoint_id", "destination_path", "resume"),
        "concurrent_future",
        "value",
        "CheckpointDownloadResult",
    ),
    *_pair(
        "RestClient",
        "delete_checkpoint",
        ("training_run_id", "checkpoint_id"),
        "concurrent_future",
        "value",
        "None",
    ),
    *_pair(
        "RestClient",
        "get_session",
        ("session_id", "access_scope"),
        "concurrent_future",
        "value",
        "GetSessionResponse",
    ),
    *_pair(
        "RestClient",
        "list_sessions",
        ("limit", "offset", "access_scope"),
        "concurrent_future",
        "value",
        "ListSessionsResponse",
    ),
    # The one RestClient method that returns an APIFuture (client/rest.py).
    *_pair(
        "RestClient", "get_sampler", ("sampler_id",), "api_future", "value", "GetSamplerResponse"
    ),
)

# Names `import pytrio as trio` exposes (pytrio/__init__.py).
TOP_LEVEL_NAMES: tuple[str, ...] = (
    "ServiceClient",
    "TrainingClient",
    "SamplingClient",
    "RestClient",
    "AdamParams",
    "Datum",
    "ModelInput",
    "SamplingParams",
    "ImageChunk",
    "PyTrioError",
    "configure",
    "configure_observability",
    "shutdown_observability",
    "types",
)
APIFUTURE_METHODS: tuple[str, ...] = ("result", "done", "exception", "cancel", "map", "completed")
# Client objects have no close(); they are released with the process.
CLIENTS_HAVE_CLOSE = False


def method(owner: ClientName, name: str) -> MethodFact:
    """Look up one method fact; KeyError names the method when it is not public on 0.2.9."""
    for fact in API_SURFACE:
        if fact.owner == owner and fact.name == name:
            return fact
    raise KeyError(f"{owner}.{name} is not part of the pytrio public API")


def methods_named(name: str) -> tuple[MethodFact, ...]:
    """All clients' methods with this name (e.g. create_sampling_client is on two clients)."""
    return tuple(fact for fact in API_SURFACE if fact.name == name)
