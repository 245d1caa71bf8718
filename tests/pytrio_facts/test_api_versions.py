"""pytrio_facts/api_versions.json: the entry of the installed pytrio agrees with the live SDK
(`inspect.signature`, `model_fields`), the data covers every release, and the generator's
reading of a wheel is exercised on a wheel built here (no network in tests)."""

from __future__ import annotations

import functools
import importlib.metadata
import inspect
import json
import zipfile
from pathlib import Path

import pydantic
import pytest
import pytrio
import pytrio.types

from pytrio_facts import api_model, generate_api
from pytrio_facts.api_model import Class, Function, Module, api_data

INSTALLED = importlib.metadata.version("pytrio")
RELEASES = ("0.1.12", "0.1.13", *(f"0.2.{n}" for n in range(10)))
_KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: "positional_only",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional_or_keyword",
    inspect.Parameter.VAR_POSITIONAL: "var_positional",
    inspect.Parameter.KEYWORD_ONLY: "keyword_only",
    inspect.Parameter.VAR_KEYWORD: "var_keyword",
}


def _live(qualname: str) -> object:
    module, _, name = qualname.rpartition(".")
    return getattr(pytrio if module == "pytrio" else pytrio.types, name)


def _params(function: object, *, method: bool) -> list[tuple[str, str, bool]]:
    params = list(inspect.signature(function).parameters.values())  # type: ignore[arg-type]
    if method and params and params[0].name in ("self", "cls"):
        params = params[1:]
    return [(p.name, _KINDS[p.kind], p.default is not inspect.Parameter.empty) for p in params]


def _ours(function: Function) -> list[tuple[str, str, bool]]:
    return [(p.name, p.kind, p.has_default) for p in function.params]


def test_every_release_on_pypi_is_covered() -> None:
    assert api_data().versions == RELEASES
    assert INSTALLED in api_data().versions


def test_installed_release_agrees_with_the_live_sdk() -> None:
    data = api_data()
    checked = 0
    for qualname in data.symbol_names():
        entry = data.symbol(qualname, INSTALLED)
        if entry is None or qualname.count(".") > 2:
            continue
        if isinstance(entry, Module):
            live_module = pytrio if qualname == "pytrio" else pytrio.types
            public = {n for n in vars(live_module) if not n.startswith("_")}
            # Subpackages count once imported by anything; the listed names are all there.
            assert set(entry.names) >= public - {"annotations"}, qualname
            assert all(hasattr(live_module, n) for n in entry.names if entry.names[n] != "module")
            continue
        live = _live(qualname)
        if isinstance(entry, Function):
            assert _ours(entry) == _params(live, method=False), qualname
            checked += 1
            continue
        assert isinstance(entry, Class)
        assert isinstance(live, type)
        for name, method in entry.methods.items():
            if name == "__init__" and entry.pydantic:
                continue
            assert _ours(method) == _params(getattr(live, name), method=True), (qualname, name)
            assert inspect.iscoroutinefunction(getattr(live, name)) is method.is_async
            checked += 1
        public_methods = {
            n
            for n, value in vars(live).items()
            if not n.startswith("_") and inspect.isfunction(value)
        }
        assert public_methods <= set(entry.methods), qualname
        for name in entry.properties:
            static = inspect.getattr_static(live, name)
            assert isinstance(static, property | functools.cached_property), (qualname, name)
        if issubclass(live, pydantic.BaseModel):
            assert entry.pydantic, qualname
            assert set(entry.fields) == set(live.model_fields), qualname
            for name, info in live.model_fields.items():
                assert entry.fields[name].has_default is not info.is_required(), (qualname, name)
            assert entry.extra == live.model_config.get("extra"), qualname
            checked += 1
    assert checked > 100


def test_method_binding_agrees_with_the_live_sdk() -> None:
    """classmethod / staticmethod / instance method, as `inspect.getattr_static` sees them."""
    data = api_data()
    seen: set[str | None] = set()
    for qualname in data.symbol_names():
        entry = data.symbol(qualname, INSTALLED)
        if not isinstance(entry, Class) or qualname.count(".") > 2:
            continue
        live = _live(qualname)
        for name, method in entry.methods.items():
            static = inspect.getattr_static(live, name)
            expected = (
                "classmethod"
                if isinstance(static, classmethod)
                else "staticmethod"
                if isinstance(static, staticmethod)
                else None
            )
            assert method.binding == expected, (qualname, name)
            seen.add(expected)
    assert seen == {None, "classmethod", "staticmethod"}
    tensor = data.symbol("pytrio.types.TensorData", INSTALLED)
    assert isinstance(tensor, Class)
    assert tensor.methods["from_torch"].binding == "classmethod"
    assert tensor.methods["to_numpy"].binding is None


def test_futures_and_awaits_follow_the_return_annotations() -> None:
    data = api_data()
    training = data.symbol("pytrio.TrainingClient", INSTALLED)
    sampling = data.symbol("pytrio.SamplingClient", INSTALLED)
    rest = data.symbol("pytrio.RestClient", INSTALLED)
    assert isinstance(training, Class) and isinstance(sampling, Class) and isinstance(rest, Class)
    assert training.methods["forward_backward"].future == "api"
    assert training.methods["forward_backward_async"].future == "api"  # two awaits
    assert sampling.methods["sample"].future == "api"
    assert sampling.methods["sample_async"].future is None  # one await gives the response
    assert rest.methods["list_user_checkpoints"].future == "concurrent"
    old_sampling = data.symbol("pytrio.SamplingClient", "0.1.13")
    assert isinstance(old_sampling, Class)
    assert old_sampling.methods["sample_async"].future == "api"


def test_configure_catch_all_and_keyword_only() -> None:
    configure = api_data().symbol("pytrio.configure", "0.2.9")
    old = api_data().symbol("pytrio.configure", "0.2.8")
    assert isinstance(configure, Function) and isinstance(old, Function)
    assert configure.catch_all is not None and configure.catch_all.name == "unknown_options"
    assert configure.max_positional == 0
    assert old.catch_all is None and "timeout" in old.keywords


def test_configure_renames_are_the_reviewed_one_to_one_map() -> None:
    """Derived from the 0.2.8 and 0.2.9 signatures and their docstrings; reviewed by hand:
    every pair has the same docstring description and the same type, and each new name is a
    0.2.9 keyword that 0.2.8 did not have."""
    renames = api_data().renames["pytrio.configure"]["0.2.9"]
    assert renames == {
        "timeout": "request_timeout_seconds",
        "retry_initial_delay": "retry_initial_delay_seconds",
        "retry_max_delay": "retry_max_delay_seconds",
        "retry_jitter": "retry_jitter_ratio",
        "training_retry_timeout": "training_retry_timeout_seconds",
        "sampling_retry_timeout": "sampling_retry_timeout_seconds",
        "actor_capacity_poll_interval": "actor_capacity_poll_interval_seconds",
        "actor_capacity_poll_jitter": "actor_capacity_poll_jitter_ratio",
        "actor_capacity_wait_timeout": "actor_capacity_wait_timeout_seconds",
        "sampling_timeout": "sampling_timeout_seconds",
        "actor_event_submit_timeout": "actor_event_submit_timeout_seconds",
        "actor_event_polling_timeout": "actor_event_polling_timeout_seconds",
        "training_max_in_flight": "training_event_max_in_flight",
        "training_max_queued": "training_event_queue_capacity",
        "sampling_max_in_flight": "sampling_request_max_in_flight",
        "sampling_max_queued": "sampling_request_queue_capacity",
        "heartbeat_enabled": "actor_heartbeat_enabled",
        "heartbeat_interval": "actor_heartbeat_interval_seconds",
    }
    live = inspect.signature(pytrio.configure).parameters
    old = api_data().symbol("pytrio.configure", "0.2.8")
    assert isinstance(old, Function)
    for before, after in renames.items():
        assert after in live and before not in live
        assert before in old.keywords and after not in old.keywords


def test_history_names_the_release() -> None:
    data = api_data()
    present = data.present("pytrio.configure", "timeout", kind="keyword")
    gone = api_model.history(present, "0.2.9")
    assert not gone.exists and gone.removed_in == "0.2.9" and gone.last_seen == "0.2.8"
    added = api_model.history(data.present("pytrio", "ImageChunk"), "0.2.6")
    assert added.added_in == "0.2.7"
    assert api_model.history(data.present("pytrio", "Nope"), "0.2.9").known is False


def test_data_is_small_and_deduplicated() -> None:
    text = api_model.DATA.read_text(encoding="utf-8")
    raw = json.loads(text)
    assert len(text) < 80_000
    assert len(raw["table"]) < 12 * len(raw["symbols"]) / 2  # most entries are shared


def _wheel(tmp_path: Path, files: dict[str, str], version: str = "9.9.9") -> Path:
    path = tmp_path / f"pytrio-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return path


def test_generator_reads_a_wheel_without_importing_it(tmp_path: Path) -> None:
    files = {
        "pytrio/__init__.py": "from .client import Client as Client\nfrom . import types as types\n"
        "from .conf import configure\nraise RuntimeError('never imported')\n",
        "pytrio/conf.py": '''
def configure(*, timeout: int | None = None, **unknown_options: object) -> None:
    """Set options.

    Args:
        timeout: request timeout in seconds.
        **unknown_options: ignored with a warning.
    """
''',
        "pytrio/client.py": """
from concurrent.futures import Future as ConcurrentFuture
from pytrio.types import APIFuture, Out
Alias = APIFuture[Out]
class _Base:
    def shared(self, a, /, b=1, *args, c, **kw) -> Alias: ...
class Client(_Base):
    def __init__(self, key=None):
        self.user_id = key
    def rest(self) -> ConcurrentFuture[Out]: ...
    async def rest_async(self) -> Out: ...
    @property
    def name(self) -> str: ...
    def _private(self): ...
""",
        "pytrio/types/__init__.py": "from .models import APIFuture as APIFuture, Out as Out\n",
        "pytrio/types/models.py": """
from typing import Generic, TypeVar
from pydantic import BaseModel, ConfigDict, Field
T = TypeVar("T")
class APIFuture(Generic[T]):
    def result(self, timeout=None) -> T: ...
class Out(BaseModel):
    model_config = ConfigDict(extra="forbid")
    loss: float
    metrics: dict = Field(default_factory=dict)
""",
    }
    wheel = generate_api.Wheel("9.9.9", generate_api.read_modules(_wheel(tmp_path, files)))
    symbols, _docs = generate_api.describe_release(wheel)
    client = symbols["pytrio.Client"]
    assert client["methods"]["shared"]["params"] == ["a", "/", "b=", "*args", "c", "**kw"]
    assert client["methods"]["shared"]["future"] == "api"
    assert client["methods"]["shared"]["returns"] == "APIFuture[Out]"
    assert client["methods"]["rest"]["future"] == "concurrent"
    assert client["methods"]["rest_async"] == {
        "k": "function",
        "params": [],
        "returns": "Out",
        "async": True,
    }
    assert client["properties"] == {"name": "str"}
    assert client["attributes"] == ["user_id"]
    assert "_private" not in client["methods"]
    out = symbols["pytrio.types.Out"]
    assert out["fields"] == {"loss": ["float", False], "metrics": ["dict", True]}
    assert out["pydantic"] and out["extra"] == "forbid"
    assert symbols["pytrio.configure"]["params"] == ["*", "timeout=", "**unknown_options"]
    assert set(symbols["pytrio"]["names"]) >= {"Client", "types", "configure"}


def test_generator_pairs_renames_by_docstring(tmp_path: Path) -> None:
    def release(version: str, params: str, docs: str) -> tuple[dict, dict]:
        files = {
            "pytrio/__init__.py": "from .conf import configure as configure\n",
            "pytrio/conf.py": f"def configure(*, {params}):\n"
            f'    """Set.\n\n    Args:\n{docs}    """\n',
        }
        wheel = generate_api.Wheel(
            version, generate_api.read_modules(_wheel(tmp_path, files, version))
        )
        return generate_api.describe_release(wheel)

    old, old_docs = release(
        "1.0.0",
        "timeout=None, threads=None, extra=None",
        "        timeout: request timeout.\n        threads: worker threads.\n"
        "        extra: something.\n",
    )
    new, new_docs = release(
        "1.0.1",
        "timeout_seconds=None, max_in_flight=None, extra=None",
        "        timeout_seconds: request timeout.\n        max_in_flight: concurrent calls.\n"
        "        extra: something.\n",
    )
    renames = generate_api.derive_renames(
        ["1.0.0", "1.0.1"],
        {"1.0.0": old, "1.0.1": new},
        {"1.0.0": old_docs, "1.0.1": new_docs},
    )
    # Only the pair with the same description is a rename; threads -> max_in_flight is not.
    assert renames == {"pytrio.configure": {"1.0.1": {"timeout": "timeout_seconds"}}}


@pytest.mark.parametrize("spec", ["0.2.8", "0.2", "0.1"])
def test_target_versions_resolve_to_releases(spec: str) -> None:
    from trio_lint.settings.target_version import resolve_version

    resolved = resolve_version(spec)
    assert resolved in RELEASES and resolved.startswith(spec)
    assert resolve_version("0.2") == "0.2.9" and resolve_version("0.1") == "0.1.13"


def test_the_rules_advice_tables_agree_with_the_generated_data() -> None:
    """The hand-written advice (what to write instead) must name things the data knows: a
    removed 0.1 method really is in 0.1.13 and not in 0.2.9, an added one the other way round."""
    from pytrio_facts.versions import ADDED_IN_0_2, ONE_LINE_KEYWORDS, REMOVED_METHODS

    data = api_data()

    def has(symbol: str, member: str, version: str, kind: str = "member") -> bool:
        return data.present(symbol, member, kind=kind)[data.index(version)]

    for fact in REMOVED_METHODS:
        assert has(f"pytrio.{fact.owner}", fact.name, "0.1.13"), fact.name
        assert not has(f"pytrio.{fact.owner}", fact.name, "0.2.9"), fact.name
    for fact in ADDED_IN_0_2:
        owner = "pytrio" if fact.owner == "pytrio" else f"pytrio.{fact.owner}"
        assert not has(owner, fact.name, "0.1.13") and has(owner, fact.name, "0.2.9"), fact.name
    methods = {"sample": "SamplingClient", "save_state": "TrainingClient"}
    methods |= {"save_weights_for_sampler": "TrainingClient"}
    methods |= {"forward_backward_custom": "TrainingClient"}
    methods |= {"create_lora_training_client": "ServiceClient"}
    for fact in ONE_LINE_KEYWORDS:
        if fact.owner in ("AdamParams", "SamplingParams"):
            symbol, member = f"pytrio.{fact.owner}", f":{fact.name}"
        else:
            symbol, member = f"pytrio.{methods[fact.owner]}", f"{fact.owner}:{fact.name}"
        missing = "0.1.13" if fact.missing_on == "0.1" else "0.2.9"
        other = "0.2.9" if fact.missing_on == "0.1" else "0.1.13"
        assert not has(symbol, member, missing, "keyword"), fact
        assert has(symbol, member, other, "keyword"), fact
