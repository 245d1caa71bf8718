"""Version-gated facts for trio-lint (appended by the lint rule catalogue, issue 4).

What each SDK line (0.1.13, 0.2.9) accepts, so version-aware rules and the 0.1 -> 0.2 migration
guide read one table. Evidence tags follow ../shared/research/api-diff.md: ``013:`` is the 0.1.13
wheel, ``029:`` the 0.2.9 wheel. tests/pytrio_facts/test_version_facts.py checks the 0.2 side of
every entry against the installed SDK. The prose summary of the migration is
`pytrio_facts.migration.MIGRATION`.
"""

# ---- appended by the lint rule engineer (issue 4) ---------------------------------------------

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pytrio_facts.sdk import LOSS_NAMES

Line = Literal["0.1", "0.2"]


@dataclass(frozen=True)
class OneLineOnly:
    """A name that exists on one SDK line only, and what to use on the line that lacks it."""

    owner: str  # class, "Class.method" for keywords, or "pytrio" for module attributes
    name: str
    missing_on: Line
    replacement: str
    evidence: str


# RestClient methods of 0.1.13 that 0.2.9 removed (api-diff.md rows 44, 48; §3.3).
REMOVED_METHODS: tuple[OneLineOnly, ...] = (
    OneLineOnly(
        "RestClient",
        "list_weights",
        "0.2",
        "`rest.list_user_checkpoints().result().checkpoints`",
        "013:lib/rest_client.py:15-28; absent from 029:client/rest.py",
    ),
    OneLineOnly(
        "RestClient",
        "get_archive_url",
        "0.2",
        "`rest.get_checkpoint_archive_url(checkpoint_id).result().url`",
        "013:lib/rest_client.py:30-44; 029:client/rest.py:293-307",
    ),
    OneLineOnly(
        "RestClient",
        "get_user_info",
        "0.2",
        "the `ServiceClient` attributes (`user_id`, `username`, `workspace_name`)",
        "api-diff.md §3.3 (removed); 029:client/service.py",
    ),
    OneLineOnly(
        "RestClient",
        "get_checkpoint_info",
        "0.2",
        "`rest.list_checkpoints(run_id).result().checkpoints`",
        "api-diff.md §3.3 (removed)",
    ),
)

# Keyword arguments accepted by one line only (api-diff.md TRIO004; rows 12, 26, 42).
ONE_LINE_KEYWORDS: tuple[OneLineOnly, ...] = (
    OneLineOnly(
        "SamplingParams",
        "ignore_eos",
        "0.2",
        "remove `ignore_eos`: 0.2 always needs `max_tokens` and stops at `max_tokens` or `stop`",
        "013:types/sample/sampling_params.py:25; 029:types/sample/sampling_params.py:20-36",
    ),
    OneLineOnly(
        "create_lora_training_client",
        "trainable_token_indices",
        "0.2",
        "remove it: 0.2 trains the embeddings and unembedding with `train_unembed=True`",
        "013:lib/service_client.py:87-97,167-175; 029:client/service.py:387-395",
    ),
    OneLineOnly(
        "create_lora_training_client",
        "lora_path",
        "0.2",
        "resume with `svc.create_training_client_from_state(path)` or `train.load_state(path)`",
        "013:lib/service_client.py:87-97; 029:client/service.py:697-806",
    ),
    OneLineOnly(
        "AdamParams",
        "grad_clip_norm",
        "0.1",
        "remove it on 0.1 (added in 0.2)",
        "013:types/optim_step/adam_params.py:5-18; 029:types/optim_step/adam_params.py:33",
    ),
    OneLineOnly(
        "sample",
        "return_text",
        "0.1",
        "remove it on 0.1 (added in 0.2)",
        "013:lib/sampling_client.py:22-29; 029:client/sampling.py:55-63",
    ),
    OneLineOnly(
        "save_state",
        "ttl_seconds",
        "0.1",
        "remove it on 0.1 (added in 0.2)",
        "013:lib/training_client.py:381-400; 029:client/training.py:694-741",
    ),
    OneLineOnly(
        "save_state",
        "overwrite",
        "0.1",
        "remove it on 0.1 (added in 0.2)",
        "013:lib/training_client.py:381-400; 029:client/training.py:694-741",
    ),
    OneLineOnly(
        "save_weights_for_sampler",
        "ttl_seconds",
        "0.1",
        "remove it on 0.1 (added in 0.2)",
        "013:lib/training_client.py:402-427; 029:client/training.py:756-804",
    ),
    OneLineOnly(
        "forward_backward_custom",
        "loss_fn_config",
        "0.1",
        "remove it on 0.1 (added in 0.2)",
        "013:lib/training_client.py:191-197; 029:client/training.py:79-97,359-364",
    ),
)

# Client methods and top-level names that 0.2 added: AttributeError on a 0.1 pin.
ADDED_IN_0_2: tuple[OneLineOnly, ...] = (
    OneLineOnly(
        "TrainingClient",
        "load_state",
        "0.1",
        "`svc.create_training_client_from_state(path)`",
        "029:client/training.py:848-931",
    ),
    OneLineOnly(
        "TrainingClient",
        "load_state_with_optimizer",
        "0.1",
        "`svc.create_training_client_from_state_with_optimizer(path)`",
        "029:client/training.py:848-931",
    ),
    OneLineOnly(
        "ServiceClient",
        "get_server_capabilities",
        "0.1",
        "`svc.get_supported_models()`",
        "029:types/server_capabilities.py:29-49",
    ),
    OneLineOnly(
        "RestClient",
        "download_checkpoint",
        "0.1",
        "`rest.get_checkpoint_archive_url(run_id, checkpoint_id)` on 0.1",
        "029:client/rest.py:325-348",
    ),
    OneLineOnly(
        "RestClient",
        "get_checkpoint_download_url",
        "0.1",
        "`rest.get_checkpoint_archive_url(run_id, checkpoint_id)` on 0.1",
        "api-diff.md §3.3 (added)",
    ),
    OneLineOnly(
        "pytrio",
        "configure",
        "0.1",
        "`pytrio.config.settings` on 0.1",
        "029:config/config.py:562-718",
    ),
    OneLineOnly(
        "pytrio",
        "PyTrioError",
        "0.1",
        "`ValueError` on 0.1",
        "029:errors/base.py:8; 0.1 wraps errors as ValueError (013:lib/_http.py:155-158)",
    ),
    OneLineOnly(
        "pytrio",
        "ImageChunk",
        "0.1",
        "a text-only `ModelInput` on 0.1",
        "api-diff.md §3.3 (added)",
    ),
)

# Loss names each line accepts: 0.1 compares exactly (013:types/forward/datum.py:36-45),
# 0.2 after strip().lower() (029:client/training_batch.py:19-57).
LOSS_NAMES_BY_LINE: dict[Line, tuple[str, ...]] = {
    "0.1": ("cross_entropy", "importance_sampling", "ppo"),
    "0.2": LOSS_NAMES,
}
# Result attributes 0.2 removed from every result type (api-diff.md §3.3).
REMOVED_RESULT_ATTRIBUTES: dict[str, str] = {
    "elapsed_time": "time the call yourself (`time.perf_counter()` around `.result()`)",
}
# 0.1 aliases and internals that 0.2 removed: old name -> public 0.2 name (same object on 0.2).
RENAMED_TOP_LEVEL: dict[str, str] = {"SampleInput": "Datum"}
