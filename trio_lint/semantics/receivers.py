"""Receiver kinds: what a PyTRIO expression can hold (clients, futures, results) and the tables
that say which call gives which.

Generic method names (`sample`, `forward`, `result`, `list_checkpoints`) appear all over torch,
Hugging Face and vLLM code, so rules match them only where the semantic model
(`semantics/model.py`, which does the inference with these tables) shows the receiver is a PyTRIO
object:

- constructors: ``trio.ServiceClient(...)``;
- factory methods: ``svc.create_lora_training_client(...)``, ``train.create_sampling_client(...)``;
- results: ``fut.result()``, ``await fut``, ``save.path``, ``resp.sequences[0]``;
- annotations on parameters and variables (``train: trio.TrainingClient``, also as strings);
- ``self.x = <typed>`` in any method types ``self.x`` in every method of that class;
- a few method names no other library uses (``forward_backward``, ``optim_step``...) type their
  receiver even when it is unknown.

Unknown never matches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from functools import cache

from pytrio_facts import api_model

__all__ = [
    "CLASS_KINDS",
    "CLIENT_KINDS",
    "CONSTRUCTED_KINDS",
    "DISTINCTIVE_METHODS",
    "FUTURE_KINDS",
    "TWINNED_METHODS",
    "Kind",
    "SdkType",
    "attribute_table",
    "keyword_match",
    "method_table",
]


class Kind(StrEnum):
    SERVICE_CLIENT = "ServiceClient"
    TRAINING_CLIENT = "TrainingClient"
    SAMPLING_CLIENT = "SamplingClient"
    REST_CLIENT = "RestClient"
    API_FUTURE = "APIFuture"
    CONCURRENT_FUTURE = "concurrent.futures.Future"
    COROUTINE = "coroutine"
    # An asyncio task (`asyncio.create_task(c)`, `tg.create_task(c)`, an item of the sets
    # `asyncio.wait` gives): `await task` and `task.result()` give what awaiting `c` gives.
    TASK = "asyncio.Task"
    LIST = "list"
    # Result objects (by the SDK's type name) and values read from them.
    FORWARD_BACKWARD_OUTPUT = "ForwardBackwardOutput"
    OPTIM_STEP_RESPONSE = "OptimStepResponse"
    SAVE_WEIGHTS_RESPONSE = "SaveWeightsResponse"
    SAVE_WEIGHTS_FOR_SAMPLER_RESPONSE = "SaveWeightsForSamplerResponse"
    SAMPLE_RESPONSE = "SampleResponse"
    SAMPLE_SEQUENCE = "SampleSequence"
    LOGPROBS = "list[float | None]"
    LOAD_STATE_RESULT = "dict"
    METRICS = "metrics"
    CHECKPOINT = "Checkpoint"
    CHECKPOINTS_LIST_RESPONSE = "CheckpointsListResponse"
    TRAINING_RUNS_RESPONSE = "TrainingRunsResponse"
    REST_RESULT = "RestResult"
    REST_DICT = "dict (0.1 RestClient)"
    CHECKPOINT_PATH = "checkpoint path"
    TOKENIZER = "tokenizer"
    MODEL_LIST = "list[str]"
    SERVER_CAPABILITIES = "GetServerCapabilitiesResponse"
    NONE = "None"
    # Training data: a Datum, its `loss_fn_inputs` and a result's `loss_fn_outputs[i]` (both
    # `dict[str, TensorData]` once the SDK built them), and the TensorData values they hold.
    DATUM = "Datum"
    TENSOR_DICT = "dict[str, TensorData]"
    TENSOR_DATA = "TensorData"


CLIENT_KINDS = frozenset(
    {Kind.SERVICE_CLIENT, Kind.TRAINING_CLIENT, Kind.SAMPLING_CLIENT, Kind.REST_CLIENT}
)
FUTURE_KINDS = frozenset({Kind.API_FUTURE, Kind.CONCURRENT_FUTURE})


@dataclass(frozen=True, slots=True)
class SdkType:
    """A kind plus, for containers (futures, coroutines, lists), what they hold."""

    kind: Kind
    of: SdkType | None = None
    # The client method that produced the value (e.g. "forward_backward"), when known.
    origin: str | None = None

    def __str__(self) -> str:
        return f"{self.kind}[{self.of}]" if self.of is not None else str(self.kind)

    @property
    def is_client(self) -> bool:
        return self.kind in CLIENT_KINDS

    @property
    def is_future(self) -> bool:
        return self.kind in FUTURE_KINDS


_RESULT_NAMES: dict[str, Kind] = {
    "ForwardBackwardOutput": Kind.FORWARD_BACKWARD_OUTPUT,
    "OptimStepResponse": Kind.OPTIM_STEP_RESPONSE,
    "SaveWeightsResponse": Kind.SAVE_WEIGHTS_RESPONSE,
    "SaveWeightsForSamplerResponse": Kind.SAVE_WEIGHTS_FOR_SAMPLER_RESPONSE,
    "SampleResponse": Kind.SAMPLE_RESPONSE,
    "list[float | None]": Kind.LOGPROBS,
    "dict": Kind.LOAD_STATE_RESULT,
    "TrainingClient": Kind.TRAINING_CLIENT,
    "SamplingClient": Kind.SAMPLING_CLIENT,
    "RestClient": Kind.REST_CLIENT,
    "CheckpointsListResponse": Kind.CHECKPOINTS_LIST_RESPONSE,
    "TrainingRunsResponse": Kind.TRAINING_RUNS_RESPONSE,
    "tokenizer": Kind.TOKENIZER,
    "list[str]": Kind.MODEL_LIST,
    "GetServerCapabilitiesResponse": Kind.SERVER_CAPABILITIES,
    "None": Kind.NONE,
}
# SDK class names (the last component of a canonical qualified name) and the kind they annotate.
CLASS_KINDS: dict[str, Kind] = {
    "ServiceClient": Kind.SERVICE_CLIENT,
    "TrainingClient": Kind.TRAINING_CLIENT,
    "SamplingClient": Kind.SAMPLING_CLIENT,
    "RestClient": Kind.REST_CLIENT,
    "APIFuture": Kind.API_FUTURE,
    "SampleSequence": Kind.SAMPLE_SEQUENCE,
    "Checkpoint": Kind.CHECKPOINT,
    "Datum": Kind.DATUM,
    "TensorData": Kind.TENSOR_DATA,
    **{name: kind for name, kind in _RESULT_NAMES.items() if name[0].isupper()},
}


def method_table(version: str) -> dict[Kind, dict[str, SdkType]]:
    """Client kind -> method -> the type a call returns, on one pytrio release ("0.2.8"; a line
    such as "0.2" means its newest release), read from the wheels' return annotations in
    `pytrio_facts/api_versions.json` (`APIFuture[X]`, `ConcurrentFuture[X]`, `X`; for an
    `async def`, what awaiting it gives). One table per release, shared by every unit's model:
    read it, never change it."""
    return _method_table(_release(version))


def _release(version: str) -> str:
    versions = api_model.releases()
    if version in versions:
        return version
    line = [v for v in versions if v.startswith(f"{version}.")]
    return max(line or versions, key=api_model.version_key)


# What the wheels' annotations cannot say: `get_tokenizer` is annotated `object` (or not at
# all) but returns the model's tokenizer.
_RESULT_OVERRIDES: dict[str, Kind] = {"get_tokenizer": Kind.TOKENIZER}
_FUTURE_OF = re.compile(r"^(APIFuture|ConcurrentFuture|Future)\[(.*)\]$")


def _result_kind(owner: str, name: str, annotation: str | None) -> Kind | None:
    """The kind of the value a method finally gives (None: unknown, left out)."""
    base = name.removesuffix("_async")
    if base in _RESULT_OVERRIDES:
        return _RESULT_OVERRIDES[base]
    if annotation is None or annotation == "object":
        return None
    if annotation == "None":
        return Kind.NONE
    if annotation in _RESULT_NAMES:
        return _RESULT_NAMES[annotation]
    if annotation == "Dict" or annotation.startswith("dict"):
        # 0.1's RestClient answered dicts; elsewhere a plain dict (`load_state`'s).
        return Kind.REST_DICT if owner == "RestClient" else Kind.LOAD_STATE_RESULT
    return Kind.REST_RESULT if owner == "RestClient" else None


@cache
def _method_table(version: str) -> dict[Kind, dict[str, SdkType]]:
    table: dict[Kind, dict[str, SdkType]] = {kind: {} for kind in CLIENT_KINDS}
    data = api_model.api_data()
    for kind in CLIENT_KINDS:
        found = data.symbol(f"pytrio.{kind.value}", version)
        if not isinstance(found, api_model.Class):
            continue
        for name, function in found.methods.items():
            if name.startswith("_"):
                continue
            base = name.removesuffix("_async")
            wrapped = _FUTURE_OF.match(function.returns or "")
            inner = wrapped.group(2) if wrapped else function.returns
            result = _result_kind(kind.value, name, inner)
            if result is None:
                continue
            typ = SdkType(result, origin=base)
            if wrapped is not None:
                future = Kind.API_FUTURE if function.future == "api" else Kind.CONCURRENT_FUTURE
                typ = SdkType(future, typ, origin=base)
            if function.is_async:
                typ = SdkType(Kind.COROUTINE, typ, origin=base)
            table[kind][name] = typ
    return table


# Every sync client method with an `_async` twin on some kind of client, in some release.
TWINNED_METHODS = frozenset(
    name
    for version in api_model.releases()
    for methods in _method_table(version).values()
    for name in methods
    if f"{name}_async" in methods
)


# Method names no other popular library uses: a call of one of these types its receiver.
DISTINCTIVE_METHODS: dict[str, Kind] = {
    name: kind
    for kind, names in {
        Kind.TRAINING_CLIENT: (
            "forward_backward",
            "forward_backward_custom",
            "optim_step",
            "save_weights_for_sampler",
            # not `save_state`: Hugging Face accelerate's `Accelerator.save_state(dir)` shares it
            "save_weights_and_get_sampling_client",
            "load_state_with_optimizer",
        ),
        Kind.SERVICE_CLIENT: (
            "create_lora_training_client",
            "create_training_client_from_state",
            "create_training_client_from_state_with_optimizer",
        ),
        Kind.REST_CLIENT: ("get_checkpoint_archive_url", "list_user_checkpoints"),
    }.items()
    for base in names
    for name in (base, f"{base}_async")
}

# What the wheels' field annotations cannot say: which `str` field is a checkpoint path, which
# dict is a result's metrics, and what `loss_fn_outputs` (of the alias `LossFnOutput`) and a
# Datum's `loss_fn_inputs` hold once the SDK built them. Keyed by the field's newest name: a
# field renamed in some release (`Checkpoint.tinker_path` -> `path` in 0.2.5) keeps its meaning.
_FIELD_OVERRIDES: dict[tuple[str, str], SdkType] = {
    ("SaveWeightsResponse", "path"): SdkType(Kind.CHECKPOINT_PATH),
    ("SaveWeightsForSamplerResponse", "path"): SdkType(Kind.CHECKPOINT_PATH),
    ("Checkpoint", "path"): SdkType(Kind.CHECKPOINT_PATH),
    ("ForwardBackwardOutput", "metrics"): SdkType(Kind.METRICS, origin="forward_backward"),
    ("OptimStepResponse", "metrics"): SdkType(Kind.METRICS, origin="optim_step"),
    ("ForwardBackwardOutput", "loss_fn_outputs"): SdkType(Kind.LIST, SdkType(Kind.TENSOR_DICT)),
    ("Datum", "loss_fn_inputs"): SdkType(Kind.TENSOR_DICT),
}
_LIST_OF = re.compile(r"^list\[(\w+)\]$")


def attribute_table(version: str) -> dict[tuple[Kind, str], SdkType]:
    """(kind of a result object, attribute) -> what the attribute holds, on one pytrio release:
    the fields its wheel declares (`api_versions.json`), typed from their annotations
    (`list[SampleSequence]`) or by `_FIELD_OVERRIDES`. A field the release lacks is not there
    (`Checkpoint.path` arrived in 0.2.5; before it the field was `tinker_path`)."""
    return _attribute_table(_release(version))


@cache
def _attribute_table(version: str) -> dict[tuple[Kind, str], SdkType]:
    data = api_model.api_data()
    table: dict[tuple[Kind, str], SdkType] = {}
    for class_name, kind in CLASS_KINDS.items():
        if kind in CLIENT_KINDS:
            continue
        symbol = next(
            (
                name
                for name in (f"pytrio.types.{class_name}", f"pytrio.{class_name}")
                if isinstance(data.symbol(name, version), api_model.Class)
            ),
            None,
        )
        if symbol is None:
            continue
        found = data.symbol(symbol, version)
        assert isinstance(found, api_model.Class)
        for name, info in found.fields.items():
            newest = _newest_name(symbol, name, version)
            typ = _FIELD_OVERRIDES.get((class_name, newest))
            if typ is None:
                listed = _LIST_OF.match(info.annotation)
                element = CLASS_KINDS.get(listed.group(1)) if listed else None
                typ = SdkType(Kind.LIST, SdkType(element)) if element is not None else None
            if typ is not None:
                table[(kind, name)] = typ
    return table


def _newest_name(symbol: str, name: str, version: str) -> str:
    """The name a field has in later releases (`renames` of `api_versions.json`)."""
    for release, pairs in sorted(
        api_model.api_data().renames.get(symbol, {}).items(),
        key=lambda item: api_model.version_key(item[0]),
    ):
        if api_model.version_key(release) > api_model.version_key(version) and name in pairs:
            name = pairs[name]
    return name


# Values built by calling an SDK class (besides clients): `trio.Datum(...)` converts its
# `loss_fn_inputs` to TensorData, so what it holds is known from the constructor alone.
CONSTRUCTED_KINDS = frozenset({*CLIENT_KINDS, Kind.DATUM, Kind.TENSOR_DATA})


@dataclass(frozen=True, slots=True)
class _Signature:
    kind: Kind
    names: frozenset[str]  # every parameter a keyword may name
    required: tuple[str, ...]  # parameters without a default, in order
    max_positional: int | None  # None: `*args` takes any number


def keyword_match(
    version: str, name: str, positional: int, keywords: frozenset[str]
) -> Kind | None:
    """The client kind whose public method `name` a call `x.name(<positional> args,
    <keywords>=...)` of an unknown receiver fits, when exactly one client method of the release
    has that name and the call gives it at least two keywords, all its parameter names, its
    required parameters and no more positional arguments than it takes. (Evidence from the
    code's own shape: `.sample(prompt=..., num_samples=..., sampling_params=...)`.)"""
    if len(keywords) < 2:
        return None
    found = _signatures(_release(version)).get(name)
    if found is None or not keywords <= found.names:
        return None
    if found.max_positional is not None and positional > found.max_positional:
        return None
    given = set(found.required[:positional]) | keywords
    return found.kind if all(param in given for param in found.required) else None


@cache
def _signatures(version: str) -> dict[str, _Signature]:
    data = api_model.api_data()
    found: dict[str, _Signature | None] = {}
    for kind in CLIENT_KINDS:
        symbol = data.symbol(f"pytrio.{kind.value}", version)
        if not isinstance(symbol, api_model.Class):
            continue
        for name, function in symbol.methods.items():
            if name.startswith("_") or function.catch_all:
                continue
            params = [p for p in function.params if p.name not in ("self", "cls")]
            signature = _Signature(
                kind,
                frozenset(p.name for p in params if p.kind != "positional_only"),
                tuple(p.name for p in params if not p.has_default and "var" not in p.kind),
                function.max_positional,
            )
            found[name] = None if name in found else signature  # on two clients: no evidence
    return {name: sig for name, sig in found.items() if sig is not None}
