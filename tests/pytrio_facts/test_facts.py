"""pytrio_facts against the installed pytrio: every fact is read back from the real SDK."""

import ast
import concurrent.futures
import importlib
import importlib.metadata
import inspect
import re
import tomllib
import typing
from pathlib import Path

import pydantic
import pytest
import pytrio as trio
from pytrio.client.builders import training as training_builders
from pytrio.client.training_batch import LOSS_INPUT_SCHEMAS, normalize_loss_fn
from pytrio.config.config import Configuration
from pytrio.errors import diagnostics
from pytrio.types import APIFuture

import pytrio_facts as facts
from pytrio_facts import api, sdk

ROOT = Path(__file__).resolve().parents[2]
SDK_DIR = Path(trio.__file__).parent
CLIENTS = {
    "ServiceClient": trio.ServiceClient,
    "TrainingClient": trio.TrainingClient,
    "SamplingClient": trio.SamplingClient,
    "RestClient": trio.RestClient,
}


def test_version_and_pin_match_the_installed_sdk_and_pyproject() -> None:
    assert importlib.metadata.version("pytrio") == facts.SDK_VERSION
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert f"pytrio{facts.SDK_PIN}" in extras["optional-dependencies"]["sdk"]


def test_metric_keys_are_the_ones_the_sdk_builds() -> None:
    tree = ast.parse((SDK_DIR / "client/adapters/training.py").read_text())
    keys: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "metrics":
            assert isinstance(node.value, ast.Dict)
            keys = [k.value for k in node.value.keys if isinstance(k, ast.Constant)]
    assert tuple(keys) == facts.METRIC_KEYS
    assert not set(facts.WRONG_METRIC_KEYS) & set(facts.METRIC_KEYS)
    assert set(facts.WRONG_METRIC_KEYS.values()) <= set(facts.METRIC_KEYS)


def test_losses_and_their_required_inputs() -> None:
    assert {loss.name: loss.required_inputs for loss in facts.LOSSES} == dict(LOSS_INPUT_SCHEMAS)
    assert set(typing.get_args(sdk.LossName)) == set(LOSS_INPUT_SCHEMAS)
    for loss in facts.LOSSES:
        assert normalize_loss_fn(f"  {loss.name.upper()} ") == loss.name
        # Only cross-entropy reads weights; policy losses drop them on the client.
        assert loss.uses_weights == (loss.name == "cross_entropy")
    with pytest.raises(ValueError, match="Unsupported loss function type"):
        normalize_loss_fn("grpo")


@pytest.mark.parametrize(
    ("model", "fields"),
    [(trio.AdamParams, facts.ADAM_PARAMS), (trio.SamplingParams, facts.SAMPLING_PARAMS)],
)
def test_parameter_types_fields_and_defaults(model: type, fields: tuple) -> None:
    sdk_fields = model.model_fields
    assert [f.name for f in fields] == list(sdk_fields)
    for fact in fields:
        assert sdk_fields[fact.name].default == fact.default, fact.name
        assert sdk_fields[fact.name].is_required() == fact.required


def test_datum_fields_and_hf_keyword_renames() -> None:
    assert tuple(trio.Datum.model_fields) == facts.DATUM_FIELDS
    for type_name, renames in facts.HF_KEYWORD_RENAMES.items():
        model = getattr(trio, type_name)
        for old, new in renames.items():
            with pytest.raises(pydantic.ValidationError):
                model(**{old: 1})
            assert new in model.model_fields


def test_limits() -> None:
    source = (SDK_DIR / "client/service.py").read_text()
    low, high = re.search(r"rank not in range\((\d+), (\d+)\)", source).groups()
    assert (facts.LIMITS.lora_rank_min, facts.LIMITS.lora_rank_max) == (int(low), int(high) - 1)
    assert facts.LIMITS.checkpoint_name_pattern == training_builders.CHECKPOINT_NAME_PATTERN_TEXT
    assert facts.LIMITS.checkpoint_name_max_length == training_builders.CHECKPOINT_NAME_MAX_LENGTH
    import pytrio.client.training as training_module

    assert facts.LIMITS.temporary_sampler_ttl_seconds == training_module._TEMP_SAMPLING_TTL_SECONDS
    config = Configuration.model_fields
    assert (
        facts.LIMITS.training_event_queue_capacity
        == config["training_event_queue_capacity"].default
    )
    assert (
        facts.LIMITS.training_event_max_in_flight == config["training_event_max_in_flight"].default
    )
    assert facts.LIMITS.retry_window_seconds == config["training_retry_timeout_seconds"].default
    signature = inspect.signature(trio.ServiceClient.create_lora_training_client)
    defaults = {n: p.default for n, p in signature.parameters.items() if n in facts.LORA_DEFAULTS}
    assert defaults == facts.LORA_DEFAULTS
    assert facts.LIMITS.lora_rank_default == facts.LORA_DEFAULTS["rank"]


def test_sampling_bounds_and_wire_keys() -> None:
    from pytrio.client.builders import sampling as sampling_builders
    from pytrio.protocol.actor.sampling_run.sample import SampleRequest
    from pytrio.types.sample.sampling_params import SamplingParams

    limits = facts.LIMITS
    prompt = {"chunks": [{"type": "encoded_text", "tokens": [1]}]}

    def valid(**fields: object) -> bool:
        base = {"request_id": "r", "prompt": prompt, "sampling_params": {"max_tokens": 1}}
        try:
            SampleRequest.model_validate({**base, **fields})
        except pydantic.ValidationError:
            return False
        return True

    low = limits.sample_max_tokens_min
    assert valid(sampling_params={"max_tokens": low})
    assert not valid(sampling_params={"max_tokens": low - 1})
    assert valid(num_samples=limits.sample_num_samples_min)
    assert not valid(num_samples=limits.sample_num_samples_min - 1)
    assert valid(topk_prompt_logprobs=limits.sample_topk_prompt_logprobs_min)
    assert not valid(topk_prompt_logprobs=limits.sample_topk_prompt_logprobs_min - 1)
    assert SamplingParams().top_k == limits.sample_top_k_unlimited
    sent = sampling_builders.build_sample_request(
        trio.ModelInput.from_ints([1]),
        num_samples=1,
        sampling_params=SamplingParams(max_tokens=1, seed=1, stop=[7]),
        include_prompt_logprobs=False,
        topk_prompt_logprobs=0,
        return_text=True,
        return_token_logprobs=True,
    ).sampling_params
    assert set(sent) <= set(facts.SAMPLING_WIRE_KEYS)
    assert "stop_token_ids" in sent
    assert set(SamplingParams.model_fields) | {"stop_token_ids"} == set(facts.SAMPLING_WIRE_KEYS)


def _return_kind(function: object) -> str:
    annotation = inspect.signature(function).return_annotation
    origin = typing.get_origin(annotation) or annotation
    if origin is APIFuture:
        return "api_future"
    if origin is concurrent.futures.Future:
        return "concurrent_future"
    return "value"


@pytest.mark.parametrize("fact", facts.API_SURFACE, ids=lambda f: f"{f.owner}.{f.name}")
def test_api_surface_matches_signatures(fact: api.MethodFact) -> None:
    function = getattr(CLIENTS[fact.owner], fact.name)
    params = [p for p in inspect.signature(function).parameters if p != "self"]
    assert tuple(params) == fact.params
    assert inspect.iscoroutinefunction(function) == fact.is_async
    assert _return_kind(function) == fact.returns


def test_api_surface_is_complete() -> None:
    for owner, cls in CLIENTS.items():
        public = {n for n, v in vars(cls).items() if callable(v) and not n.startswith("_")}
        listed = {f.name for f in facts.API_SURFACE if f.owner == owner}
        assert public == listed, owner
        assert not hasattr(cls, "close")
    assert api.CLIENTS_HAVE_CLOSE is False


def test_top_level_names_and_apifuture_methods() -> None:
    public = {n for n in dir(trio) if not n.startswith("_")}
    assert set(facts.TOP_LEVEL_NAMES) <= public
    assert public - set(facts.TOP_LEVEL_NAMES) <= {
        "auth", "cli", "client", "config", "errors", "logging", "model", "observability",
        "protocol", "runtime", "transport",
    }  # fmt: skip
    for name in facts.APIFUTURE_METHODS:
        assert callable(getattr(APIFuture, name))
    assert not hasattr(APIFuture, "map_model")


def _codes_raised_by_the_sdk() -> set[str]:
    codes: set[str] = set()
    for path in SDK_DIR.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.keyword) and node.arg == "code":
                value = node.value
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    codes.add(value.value)
                elif isinstance(value, ast.JoinedStr):
                    # actor.sampling.{kind}_timeout: expand with the kinds the SDK uses
                    source = path.read_text()
                    for kind in re.findall(r'_sampling_timeout\(\s*"(\w+)"', source):
                        codes.add(f"actor.sampling.{kind}_timeout")
                    codes.update(
                        f"actor.sampling.{k}_timeout" for k in ("first_chunk", "chunk_idle")
                    )
    codes.discard("pytrio.error")
    return codes


def test_error_codes_cover_every_code_the_sdk_knows() -> None:
    listed = [fact.code for fact in facts.ERROR_CODES]
    assert len(listed) == len(set(listed)), "duplicate codes"
    known = set(diagnostics._KNOWN_CODES) | _codes_raised_by_the_sdk()
    assert set(listed) == known


@pytest.mark.parametrize("fact", facts.ERROR_CODES, ids=lambda f: f.code)
def test_error_hints_are_the_sdks_own(fact) -> None:
    diagnostic = diagnostics.diagnose(code=fact.code)
    assert fact.hint == diagnostic.hint
    assert fact.retryable == diagnostic.retryable
    assert fact.cause and fact.fix
    classes = {
        name
        for module in ("base", "auth", "control", "actor", "event", "protocol")
        for name in dir(importlib.import_module(f"pytrio.errors.{module}"))
    }
    for name in re.split(r"\s*/\s*", fact.error_class):
        assert name in classes, name


def test_pytrio_error_is_not_a_value_error() -> None:
    from pytrio.errors.base import ValidationError

    assert not issubclass(ValidationError, ValueError)
    assert facts.CATCH_ALL == ("trio.PyTrioError", "ValueError")


def test_removed_apis_are_gone() -> None:
    owners = {"pytrio": trio, "APIFuture": APIFuture, **CLIENTS}
    for owner, names in facts.REMOVED_ATTRIBUTES.items():
        target = owners.get(owner) or getattr(trio, owner)
        for name in names:
            if owner == "SamplingParams":
                assert name not in target.model_fields
            else:
                assert not hasattr(target, name), f"{owner}.{name}"
    for qualified, keywords in facts.REMOVED_KEYWORDS.items():
        owner, name = qualified.split(".")
        params = inspect.signature(getattr(CLIENTS[owner], name)).parameters
        assert not set(keywords) & set(params)


def test_model_catalogue_has_the_default_and_trio_local_serves_it() -> None:
    assert facts.MODEL_CATALOGUE[0] == facts.DEFAULT_BASE_MODEL
    catalogue = pytest.importorskip("trio_local.catalogue")
    assert set(facts.MODEL_CATALOGUE) <= set(catalogue.known_ids())
