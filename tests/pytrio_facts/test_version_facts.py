"""pytrio_facts/versions.py and the receiver method table, checked against the installed SDK
(pytrio 0.2.9): every 0.2 claim the version-gated rules rely on is introspected, not re-typed."""

from __future__ import annotations

import inspect

import pydantic
import pytest
import pytrio as trio
import pytrio.types

from pytrio_facts.api import TYPES_NAMES, public_names, removed_top_level
from pytrio_facts.migration import REMOVED_ATTRIBUTES, REMOVED_KEYWORDS
from pytrio_facts.sdk import LOSS_NAMES
from pytrio_facts.versions import (
    ADDED_IN_0_2,
    LOSS_NAMES_BY_LINE,
    ONE_LINE_KEYWORDS,
    REMOVED_METHODS,
)
from trio_lint import lint_source
from trio_lint.semantics.receivers import DISTINCTIVE_METHODS, Kind, method_table

CLIENTS = {
    "ServiceClient": trio.ServiceClient,
    "TrainingClient": trio.TrainingClient,
    "SamplingClient": trio.SamplingClient,
    "RestClient": trio.RestClient,
}
TYPES = {"AdamParams": trio.AdamParams, "SamplingParams": trio.SamplingParams}


def _accepts(owner: str, keyword: str) -> bool:
    if owner in TYPES:
        return keyword in TYPES[owner].model_fields
    method = owner.rsplit(".", 1)[-1]
    for cls in CLIENTS.values():
        if hasattr(cls, method):
            return keyword in inspect.signature(getattr(cls, method)).parameters
    raise AssertionError(f"no client has {method}")


def test_removed_methods_are_gone() -> None:
    for fact in REMOVED_METHODS:
        assert not hasattr(CLIENTS[fact.owner], fact.name), fact
    for name in REMOVED_ATTRIBUTES["APIFuture"]:
        assert not hasattr(pytrio.types.APIFuture, name)


@pytest.mark.parametrize("fact", ONE_LINE_KEYWORDS, ids=lambda f: f"{f.owner}.{f.name}")
def test_one_line_keywords(fact) -> None:
    assert _accepts(fact.owner, fact.name) is (fact.missing_on == "0.1")


def test_removed_keyword_really_fails_on_0_2() -> None:
    with pytest.raises(pydantic.ValidationError):
        trio.SamplingParams(max_tokens=8, ignore_eos=True)


def test_added_in_0_2_exist() -> None:
    for fact in ADDED_IN_0_2:
        owner = trio if fact.owner == "pytrio" else CLIENTS[fact.owner]
        assert hasattr(owner, fact.name), fact


def test_loss_names_and_types_names() -> None:
    assert LOSS_NAMES_BY_LINE["0.2"] == LOSS_NAMES
    assert set(TYPES_NAMES) == {name for name in dir(pytrio.types) if name[0].isupper()}


def test_public_names_follow_the_release() -> None:
    """`pytrio` / `pytrio.types` exports are read per release from the wheels' data, not typed."""
    assert "ImageChunk" in public_names("pytrio", "0.2.9")
    assert "ImageChunk" not in public_names("pytrio", "0.2.6")
    assert "SampleInput" in public_names("pytrio", "0.1.13")
    assert "CheckpointsListResponse" not in public_names("pytrio.types", "0.1.13")
    assert removed_top_level("0.2.9") == {"SampleInput": "0.2.0", "ServiceParams": "0.2.0"}
    assert removed_top_level("0.1.13") == {}


def _returns(func) -> str:
    # The signature's return annotation as text (get_type_hints would need torch for
    # forward_backward_custom's parameter annotations).
    return str(inspect.signature(func).return_annotation)


def test_receiver_method_table_matches_the_sdk_annotations() -> None:
    table = method_table("0.2")
    kinds = {
        Kind.SERVICE_CLIENT: trio.ServiceClient,
        Kind.TRAINING_CLIENT: trio.TrainingClient,
        Kind.SAMPLING_CLIENT: trio.SamplingClient,
        Kind.REST_CLIENT: trio.RestClient,
    }
    for kind, cls in kinds.items():
        public = {
            n for n, _ in inspect.getmembers(cls, inspect.isfunction) if not n.startswith("_")
        }
        assert set(table[kind]) == public, (kind, set(table[kind]) ^ public)
        for name, typ in table[kind].items():
            func = getattr(cls, name)
            returns = _returns(func)
            is_coroutine = inspect.iscoroutinefunction(func)
            assert (typ.kind is Kind.COROUTINE) == is_coroutine, (name, typ)
            value = typ.of if is_coroutine else typ
            assert value is not None
            if value.kind is Kind.API_FUTURE:
                assert "APIFuture" in returns, (name, returns)
            elif value.kind is Kind.CONCURRENT_FUTURE:
                assert "concurrent.futures" in returns, (name, returns)
            else:
                assert "APIFuture" not in returns and "Future" not in returns, (name, returns)


def test_distinctive_methods_exist_on_their_client() -> None:
    classes = {
        Kind.SERVICE_CLIENT: trio.ServiceClient,
        Kind.TRAINING_CLIENT: trio.TrainingClient,
        Kind.REST_CLIENT: trio.RestClient,
    }
    for name, kind in DISTINCTIVE_METHODS.items():
        assert hasattr(classes[kind], name), name


def test_versions_agree_with_the_migration_summary() -> None:
    """versions.py (what the rules read) and migration.py (what the docs say) name the same
    removals."""
    assert {f.name for f in REMOVED_METHODS} == set(REMOVED_ATTRIBUTES["RestClient"])
    removed_keywords = {(f.owner, f.name) for f in ONE_LINE_KEYWORDS if f.missing_on == "0.2"}
    assert ("SamplingParams", "ignore_eos") in removed_keywords
    for name in REMOVED_KEYWORDS["ServiceClient.create_lora_training_client"]:
        assert ("create_lora_training_client", name) in removed_keywords


def _messages(code: str, target: str) -> list[str]:
    found = lint_source(code, config={"target-version": target, "select": ["PTR001", "PTR002"]})
    return [f"{d.code} {d.message}" for d in found]


def test_import_rules_read_the_target_releases_names() -> None:
    """PTR002 names the release that removed a top-level name, and says nothing on a target that
    still exports it; PTR001 offers its rewrite only for names the target exports."""
    (found,) = [m for m in _messages("from pytrio import SampleInput\n", "0.2.9") if "PTR002" in m]
    assert found.startswith("PTR002") and "was removed in 0.2.0; use `Datum`" in found
    on_old = _messages("from pytrio import SampleInput\n", "0.1.13")
    assert not any(m.startswith("PTR002") for m in on_old)
    assert (
        lint_source(
            "from pytrio import ImageChunk\nImageChunk\n",
            config={"target-version": "0.2.9", "select": ["PTR001"]},
            edits=True,
        )[0].fix
        is not None
    )
    assert (
        lint_source(
            "from pytrio import ImageChunk\nImageChunk\n",
            config={"target-version": "0.2.6", "select": ["PTR001"]},
            edits=True,
        )[0].fix
        is None
    )
