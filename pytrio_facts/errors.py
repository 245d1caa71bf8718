"""Every error code pytrio 0.2.9 knows: its class, the SDK's own hint, the cause and the fix.

Codes come from two places in the SDK: the diagnostics table (pytrio/errors/diagnostics.py,
mostly server codes) and the `code="..."` arguments of the errors the SDK raises itself.
`hint` is exactly what `PyTrioError.hint` shows for that code (empty when the SDK has none);
tests/pytrio_facts/test_facts.py compares both the code set and the hints with the installed SDK.
"""

from __future__ import annotations

from dataclasses import dataclass

_VALIDATION_HINT = "Check the SDK method arguments and retry with valid values."
_AUTH_HINT = "Check authentication configuration and retry with valid credentials."
_DEPENDENCY_HINT = "Install the missing optional dependency, then retry."
_LOOP_HINT = (
    "SDK internals crossed event loops. This should not happen in normal use; "
    "please report the issue."
)


@dataclass(frozen=True)
class ErrorFact:
    code: str
    error_class: str
    hint: str
    retryable: bool
    cause: str
    fix: str
    # "sdk": raised by the client itself; "server": a code the service sends back.
    origin: str = "sdk"


def _server(code: str, hint: str, retryable: bool, cause: str, fix: str) -> ErrorFact:
    return ErrorFact(
        code,
        "ControlAPIError / ActorAPIError / EventFailedError",
        hint,
        retryable,
        cause,
        fix,
        origin="server",
    )


ERROR_CODES: tuple[ErrorFact, ...] = (
    # --- codes the service sends; hints from pytrio/errors/diagnostics.py -----------------
    _server(
        "billing_insufficient_balance",
        "Your workspace balance is insufficient or overdue. Add credits or ask a workspace "
        "admin to resolve billing before retrying.",
        False,
        "the workspace has no credit left",
        "top up the workspace, then rerun",
    ),
    _server(
        "too_many_requests",
        "The service is busy or rate limited. Retry after a short delay or reduce concurrency.",
        True,
        "rate limit or busy service (HTTP 429)",
        "the SDK already retries for up to 15 min; lower the number of in-flight calls",
    ),
    _server(
        "actor_capacity_exceeded",
        "Server remained at capacity until the wait timeout. Retry later or increase "
        "actor_capacity_wait_timeout_seconds to wait longer.",
        True,
        "no free trainer/sampler capacity before the wait timeout",
        "retry later or raise `trio.configure(actor_capacity_wait_timeout_seconds=...)`",
    ),
    _server(
        "service_unavailable",
        "A Trio service dependency is temporarily unavailable. Retry later.",
        True,
        "a backend dependency is down",
        "retry later",
    ),
    _server(
        "auth_service_unavailable",
        "Authentication is temporarily unavailable. Retry later.",
        True,
        "the login service is down",
        "retry later",
    ),
    _server(
        "no_available_actor",
        "No available runner for this model. Retry later or choose another supported model.",
        True,
        "no runner serves this base model right now",
        "retry later or pick another id from `get_supported_models()`",
    ),
    _server(
        "model_not_found",
        "The requested model is not published or not visible to this workspace. Choose a "
        "supported model and retry.",
        False,
        "`base_model` is not in the catalogue (typo, or Base vs Instruct variant)",
        "use an id returned by `service.get_supported_models()`",
    ),
    _server(
        "api_key_expired",
        "Create or use a non-expired API key, then retry.",
        False,
        "the API key has expired",
        "create a new key and run `trio login -r`",
    ),
    _server(
        "api_key_revoked",
        "This API key was revoked. Create or use another API key.",
        False,
        "the API key was revoked",
        "create a new key and run `trio login -r`",
    ),
    _server(
        "api_key_disabled",
        "This API key was disabled. Ask a workspace admin to enable it or create another key.",
        False,
        "the API key was disabled by an admin",
        "ask an admin or use another key",
    ),
    _server(
        "unauthorized",
        "Make sure your API key is valid and has access to this Trio environment.",
        False,
        "wrong key, or a key for another environment (`PYTRIO_BASE_URL`)",
        "check `trio env show` and `PYTRIO_API_KEY`; run `trio login -r`",
    ),
    _server(
        "forbidden",
        "The credentials are valid but do not have permission for this operation.",
        False,
        "the key lacks permission (e.g. another workspace's run or checkpoint)",
        'use a key of the owning workspace, or `access_scope="accessible"` for shared runs',
    ),
    _server(
        "validation_failed",
        "Check the request arguments and retry with valid values.",
        False,
        "the service rejected an argument",
        "read the message and details; fix the named field",
    ),
    _server(
        "checkpoint_invalid_type",
        "The checkpoint type does not match the requested run type. Use Train checkpoints for "
        "training. Sampling accepts compatible Train or Sampler checkpoints.",
        False,
        "a sampler checkpoint (save_weights_for_sampler) was used to resume training",
        "resume from a `save_state` path; sample from either kind",
    ),
    _server(
        "invalid_request_body",
        "The request body could not be parsed. Check the SDK version and request payload.",
        False,
        "the service could not parse the request (often an SDK/server version skew)",
        "upgrade pytrio to the version the service expects",
    ),
    _server(
        "invalid_query_params",
        "Check the query parameters and retry with valid values.",
        False,
        "bad limit/offset/access_scope",
        "use non-negative limit/offset and `owned` or `accessible`",
    ),
    _server(
        "invalid_path_params",
        "Check the resource identifier in the request path.",
        False,
        "a malformed run, checkpoint or session id",
        "pass ids exactly as returned by the RestClient",
    ),
    _server(
        "actor_disabled",
        "The selected compute actor was disabled. Retry later or contact support.",
        True,
        "the compute node was taken out of service",
        "retry later",
    ),
    _server(
        "runner_disabled",
        "The selected runner was disabled. Retry later or contact support.",
        True,
        "the model runner was taken out of service",
        "retry later",
    ),
    _server(
        "internal_error",
        "The service hit an internal error. Retry if it is safe; include the code and task or "
        "event id when contacting support.",
        True,
        "a server-side bug or crash",
        "retry; report with the task/event id from the error",
    ),
    _server(
        "unknown",
        "The service returned an unknown error. Include the code and task or event id when "
        "contacting support.",
        True,
        "the service gave no stable code",
        "retry; report with the task/event id from the error",
    ),
    _server(
        "database_error",
        "The service hit a storage error. Retry later.",
        True,
        "server storage failure",
        "retry later",
    ),
    # --- transport codes ---------------------------------------------------------------
    ErrorFact(
        "control.request_failed",
        "ControlAPIError",
        "The Control request failed after retries. Check network connectivity and the "
        "configured base URL.",
        True,
        "the Control API could not be reached for the whole retry window",
        "check the network, proxies and `PYTRIO_BASE_URL`",
    ),
    ErrorFact(
        "control.invalid_response",
        "ControlAPIError",
        "",
        False,
        "the Control API answered with an unexpected shape",
        "check `PYTRIO_BASE_URL` points at a PyTRIO service; upgrade pytrio",
    ),
    ErrorFact(
        "actor.request_failed",
        "ActorAPIError",
        "The Actor request failed after retries. Retry later or check network connectivity.",
        True,
        "the trainer/sampler endpoint could not be reached for the whole retry window",
        "check the network; retry",
    ),
    ErrorFact(
        "actor.invalid_response",
        "ActorAPIError",
        "",
        False,
        "the trainer/sampler answered with an unexpected shape",
        "upgrade pytrio to the version the service expects",
    ),
    ErrorFact(
        "actor.event_mismatch",
        "ActorEventSubmitError / ActorEventGetError",
        "",
        False,
        "the service answered for a different event than was submitted",
        "create a new training client; report if it repeats",
    ),
    ErrorFact(
        "actor.client_closed",
        "ActorError",
        "",
        False,
        "a client was used after its session was closed",
        "create a new ServiceClient and clients",
    ),
    ErrorFact(
        "actor.transport_unavailable",
        "ActorError",
        "",
        False,
        "no HTTP transport for the actor (internal state)",
        "create a new client",
    ),
    ErrorFact(
        "actor.renew_unavailable",
        "ActorError",
        "",
        False,
        "actor credentials expired with no way to renew them",
        "create a new client",
    ),
    ErrorFact(
        "actor.invalid_renew_response",
        "ActorError",
        "",
        False,
        "credential renewal returned an invalid answer",
        "create a new client",
    ),
    ErrorFact(
        "actor.sampling.first_chunk_timeout",
        "ActorAPIError",
        "",
        False,
        "no sampling output before `sampling_first_chunk_timeout_seconds`",
        "lower max_tokens/num_samples or raise the timeout with `trio.configure`",
    ),
    ErrorFact(
        "actor.sampling.chunk_idle_timeout",
        "ActorAPIError",
        "",
        False,
        "the sampling stream stalled longer than `sampling_chunk_idle_timeout_seconds`",
        "retry; raise the timeout with `trio.configure`",
    ),
    ErrorFact(
        "actor.sampling.total_timeout",
        "ActorAPIError",
        "",
        False,
        "sampling took longer than `sampling_timeout_seconds`",
        "sample fewer tokens or raise the timeout with `trio.configure`",
    ),
    ErrorFact(
        "event.polling_failed",
        "EventPollingError",
        "",
        False,
        "the result of a training event could not be fetched",
        "check the network; create a new training client and resume from the last checkpoint",
    ),
    ErrorFact(
        "sdk.compatibility_blocked",
        "SDKCompatibilityError",
        "",
        False,
        "the service no longer accepts this pytrio version",
        "upgrade pytrio with the command in the message",
    ),
    # --- training runs ----------------------------------------------------------------
    ErrorFact(
        "training.run_broken",
        "PyTrioError",
        "The training run coordinator is no longer safe to use. Create a new training client "
        "and retry.",
        False,
        "one chunk of a split forward_backward failed, so queued events cannot be trusted",
        "create a new training client from the last `save_state` path",
    ),
    ErrorFact(
        "training.run_closed",
        "PyTrioError",
        "",
        False,
        "the training client's run was closed",
        "create a new training client",
    ),
    ErrorFact(
        "training.run_loop_mismatch",
        "PyTrioError",
        _LOOP_HINT,
        False,
        "SDK internals crossed event loops",
        "report it; as a workaround create the client in the loop that uses it",
    ),
    ErrorFact(
        "sampling.run_closed",
        "PyTrioError",
        "",
        False,
        "the sampling client's run was closed",
        "create a new sampling client",
    ),
    ErrorFact(
        "sampling.run_loop_mismatch",
        "PyTrioError",
        _LOOP_HINT,
        False,
        "SDK internals crossed event loops",
        "report it; as a workaround create the client in the loop that uses it",
    ),
    # --- validation, raised before anything is sent --------------------------------------
    ErrorFact(
        "validation.invalid_lora_rank",
        "ValidationError",
        _VALIDATION_HINT,
        False,
        "`rank` outside 4..64 (also checked for a checkpoint's rank)",
        "use a rank between 4 and 64 (default 32)",
    ),
    ErrorFact(
        "validation.unsupported_model",
        "ValidationError",
        _VALIDATION_HINT,
        False,
        "`base_model` is not in the server's catalogue",
        "pick an id from `service.get_supported_models()`",
    ),
    ErrorFact(
        "validation.missing_base_model",
        "ValidationError",
        _VALIDATION_HINT,
        False,
        "the checkpoint's metadata names no base model",
        "restore from a `save_state` path of a LoRA training run",
    ),
    ErrorFact(
        "validation.empty_training_data",
        "ValidationError",
        _VALIDATION_HINT,
        False,
        "`forward`/`forward_backward` got an empty list",
        "pass at least one `trio.Datum`",
    ),
    ErrorFact(
        "validation.empty_training_sample",
        "ValidationError",
        _VALIDATION_HINT,
        False,
        "a Datum has an empty `model_input`",
        "drop empty samples before building the batch",
    ),
    ErrorFact(
        "validation.token_id_out_of_range",
        "ValidationError",
        _VALIDATION_HINT,
        False,
        "a token id outside the tokenizer vocabulary (e.g. -100 in `model_input`)",
        "use the training client's tokenizer; -100 is allowed only in `target_tokens`",
    ),
    ErrorFact(
        "validation.training_sample_too_long",
        "ValidationError",
        _VALIDATION_HINT,
        False,
        "a sample is longer than the model's `max_seq_len`",
        "truncate samples (see `get_server_capabilities()`)",
    ),
    ErrorFact(
        "validation.training_sample_too_large",
        "ValidationError",
        _VALIDATION_HINT,
        False,
        "a single sample exceeds `max_tokens_per_request`",
        "truncate or split the sample",
    ),
    ErrorFact(
        "validation.invalid_tokenizer_vocab_size",
        "ValidationError",
        _VALIDATION_HINT,
        False,
        "the model's tokenizer has no usable vocabulary size",
        "make sure the tokenizer for `model_id` loads (`get_tokenizer()`)",
    ),
    ErrorFact(
        "validation.missing_logprobs",
        "ValidationError",
        _VALIDATION_HINT,
        False,
        "the backend returned no logprobs for `forward_backward_custom`",
        "check the server supports custom losses",
    ),
    ErrorFact(
        "validation.missing_custom_loss_gradient",
        "ValidationError",
        _VALIDATION_HINT,
        False,
        "the custom loss tensor does not depend on the logprobs (no gradient)",
        "build the loss from the `logprobs` tensors passed to your loss_fn",
    ),
    ErrorFact(
        "validation.already_initialized",
        "ValidationError",
        _VALIDATION_HINT,
        False,
        "`load_state` was called after forward/optim/save on the same client",
        "call `load_state` first, or use `create_training_client_from_state`",
    ),
    ErrorFact(
        "validation.checkpoint_config_mismatch",
        "ValidationError",
        _VALIDATION_HINT,
        False,
        "the checkpoint's base model, rank or train_* flags differ from the client's",
        "create the client with the checkpoint's settings (note train_unembed=True default)",
    ),
    ErrorFact(
        "validation.invalid_checkpoint_name",
        "ValidationError",
        _VALIDATION_HINT,
        False,
        "the save name fails `^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9_-])?$` (e.g. a `/`)",
        "use letters, digits, `.`, `_`, `-` (spaces become `-` with a warning)",
    ),
    ErrorFact(
        "validation.unknown_checkpoint_type",
        "ValidationError",
        _VALIDATION_HINT,
        False,
        "the service listed a checkpoint of a type this SDK does not know",
        "upgrade pytrio",
    ),
    ErrorFact(
        "validation.forward_response_count_mismatch",
        "ValidationError",
        _VALIDATION_HINT,
        False,
        "the trainer returned a different number of chunk results than were sent",
        "retry with a new training client; report if it repeats",
    ),
    ErrorFact(
        "validation.forward_output_count_mismatch",
        "ValidationError",
        _VALIDATION_HINT,
        False,
        "the trainer returned a different number of per-sample outputs than samples sent",
        "retry with a new training client; report if it repeats",
    ),
    ErrorFact(
        "validation.empty_prompt",
        "ValidationError",
        _VALIDATION_HINT,
        False,
        "`sample()` got an empty prompt",
        "pass a non-empty `trio.ModelInput.from_ints(tokens)`",
    ),
    ErrorFact(
        "validation.invalid_sampling_request",
        "ValidationError",
        _VALIDATION_HINT,
        False,
        "`max_tokens` missing or <= 0 (SamplingParams() defaults it to None), or num_samples < 1",
        "pass `sampling_params=trio.SamplingParams(max_tokens=N)` with N > 0",
    ),
    ErrorFact(
        "validation.image_logprobs_unsupported",
        "ValidationError",
        _VALIDATION_HINT,
        False,
        "prompt logprobs or `compute_logprobs` were asked for a prompt with images",
        "compute logprobs on text-only prompts",
    ),
    ErrorFact(
        "validation.empty_rest_argument",
        "ValidationError",
        _VALIDATION_HINT,
        False,
        "a RestClient id argument is empty",
        "pass the id from a listing (`list_training_runs`, `list_checkpoints`)",
    ),
    ErrorFact(
        "validation.invalid_event_queue_limit",
        "ValidationError",
        _VALIDATION_HINT,
        False,
        "`training_event_*` limits set to a non-positive value",
        "use positive values in `trio.configure`",
    ),
    ErrorFact(
        "validation.invalid_sampling_queue_limit",
        "ValidationError",
        _VALIDATION_HINT,
        False,
        "`sampling_request_*` limits set to a non-positive value",
        "use positive values in `trio.configure`",
    ),
    # --- authentication and configuration ------------------------------------------------
    ErrorFact(
        "auth.missing_api_key",
        "AuthError",
        _AUTH_HINT,
        False,
        "no API key saved and none passed (0.2.9 never prompts inside ServiceClient())",
        "run `trio login`, set `PYTRIO_API_KEY`, or pass `ServiceClient(api_key=...)`",
    ),
    ErrorFact(
        "auth.login_failed",
        "AuthError",
        _AUTH_HINT,
        False,
        "the key was rejected when the ServiceClient verified it",
        "check the key and `PYTRIO_BASE_URL`; `trio login -r`",
    ),
    ErrorFact(
        "auth.verify_failed",
        "AuthError",
        _AUTH_HINT,
        False,
        "`trio login` could not verify the key",
        "check the key and the base URL",
    ),
    ErrorFact(
        "auth.invalid_user_info",
        "AuthError",
        _AUTH_HINT,
        False,
        "the service returned no user for the key",
        "use another key",
    ),
    ErrorFact(
        "auth.invalid_config",
        "AuthError",
        _AUTH_HINT,
        False,
        "`~/.pytrio/config.toml` or `env.toml` is malformed",
        "fix or delete the file, then `trio login`",
    ),
    ErrorFact(
        "auth.read_config_failed",
        "AuthError",
        _AUTH_HINT,
        False,
        "the config file could not be read",
        "check permissions of `~/.pytrio/`",
    ),
    ErrorFact(
        "auth.save_config_failed",
        "AuthError",
        _AUTH_HINT,
        False,
        "the config file could not be written",
        "check permissions of `~/.pytrio/`",
    ),
    ErrorFact(
        "auth.delete_config_failed",
        "AuthError",
        _AUTH_HINT,
        False,
        "a profile could not be deleted",
        "check permissions of `~/.pytrio/`",
    ),
    ErrorFact(
        "configuration.env_not_found",
        "ConfigurationError",
        "",
        False,
        "`PYTRIO_ENV` or `trio env use` names a profile that does not exist",
        "list profiles with `trio env list`",
    ),
    ErrorFact(
        "configuration.invalid_environment",
        "ConfigurationError",
        "",
        False,
        "an invalid profile name or `PYTRIO_*` variable",
        "fix the variable or profile name",
    ),
    ErrorFact(
        "dependency.missing_torch",
        "DependencyError",
        _DEPENDENCY_HINT,
        False,
        "`forward_backward_custom` needs torch on the local machine",
        "`pip install torch`",
    ),
    ErrorFact(
        "dependency.missing_tokenizer_backend",
        "DependencyError",
        _DEPENDENCY_HINT,
        False,
        "neither modelscope nor transformers can be imported",
        "`pip install transformers` (both are normal pytrio dependencies)",
    ),
    # --- checkpoint downloads ---------------------------------------------------------------
    ErrorFact(
        "download.failed",
        "PyTrioError",
        "",
        False,
        "the checkpoint download failed after retries",
        "retry `download_checkpoint` (it resumes by default)",
    ),
    ErrorFact(
        "download.request_failed",
        "PyTrioError",
        "",
        False,
        "the download request failed",
        "check the network; retry",
    ),
    ErrorFact(
        "download.invalid_tls_certificate",
        "PyTrioError",
        "",
        False,
        "the storage endpoint's TLS material is invalid",
        "check proxies that intercept TLS",
    ),
    ErrorFact(
        "download.unexpected_partial_content",
        "PyTrioError",
        "",
        False,
        "the server sent partial content that was not asked for",
        "delete the partial file and retry",
    ),
    ErrorFact(
        "download.invalid_content_range",
        "PyTrioError",
        "",
        False,
        "a resumed download got a bad Content-Range",
        "retry with `resume=False`",
    ),
    ErrorFact(
        "download.content_range_length_mismatch",
        "PyTrioError",
        "",
        False,
        "the download length disagrees with Content-Range",
        "retry with `resume=False`",
    ),
)


@dataclass(frozen=True)
class PlainError:
    """Errors that are not PyTrioError: input checks raise ValueError or pydantic errors."""

    exception: str
    when: str
    fix: str


PLAIN_ERRORS: tuple[PlainError, ...] = (
    PlainError(
        "ValueError: Unsupported loss function type: <name>",
        "`loss_fn` is not one of cross_entropy, importance_sampling, ppo, cispo, dro",
        "use one of the five names (e.g. GRPO uses `importance_sampling`)",
    ),
    PlainError(
        "ValueError: target_tokens is required",
        "`loss_fn_inputs` lacks a required key (e.g. HF `labels`)",
        "name the key `target_tokens`; policy losses also need `logprobs`, `advantages`",
    ),
    PlainError(
        "ValueError: target_tokens must have shape [N], got [M]",
        "targets are not the same length as `model_input`",
        "shift once: input `tokens[:-1]`, targets `tokens[1:]`, weights `weights[1:]`",
    ),
    PlainError(
        "ValueError: target_tokens must have dtype int64",
        "float targets",
        "pass integer token ids",
    ),
    PlainError(
        "ValueError: weights must have shape [N] / must be finite",
        "weights not shifted with the targets, or NaN/inf",
        "slice weights `[1:]` together with the targets",
    ),
    PlainError(
        "pydantic_core.ValidationError: Extra inputs are not permitted",
        "a wrong field name (`lr`, `max_new_tokens`, `ignore_eos`) or a raw list as model_input",
        "`learning_rate`, `max_tokens`; wrap tokens with `trio.ModelInput.from_ints`",
    ),
    PlainError(
        "AttributeError: 'list' object has no attribute 'is_empty'",
        "`sample(prompt=[...])` with a raw list",
        "`prompt=trio.ModelInput.from_ints(tokens)`",
    ),
    PlainError(
        "AttributeError: 'dict' object has no attribute 'max_tokens'",
        "`sampling_params={...}` as a dict",
        "`sampling_params=trio.SamplingParams(max_tokens=...)`",
    ),
    PlainError(
        "TypeError: object SampleResponse can't be used in 'await' expression",
        "`await (await sampler.sample_async(...))` (the 0.1 habit)",
        "one await: `await sampler.sample_async(...)`",
    ),
    PlainError(
        "TimeoutError",
        "`future.result(timeout=...)` ran out",
        "do not wrap SDK calls in short timeouts; the SDK retries for up to 15 min",
    ),
)

# What to catch: PyTrioError is not a ValueError subclass, and input checks raise ValueError.
CATCH_ALL = ("trio.PyTrioError", "ValueError")


def error(code: str) -> ErrorFact:
    for fact in ERROR_CODES:
        if fact.code == code:
            return fact
    raise KeyError(f"pytrio 0.2.9 has no error code {code!r}")
