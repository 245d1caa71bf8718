"""Property-based fuzzing of every trio-local endpoint, both planes (hypothesis).

Each example starts from a request the SDK would send and makes exactly one part of it
hostile: a non-finite float, an integer past 64 bits, a container where a scalar belongs, an
unknown key, a hostile id in the path, a hostile key or token. Every such request must be
refused with a 4xx (never a 5xx, never accepted), the server must keep answering, and no file
may appear outside its data directory. Example counts are bounded to keep CI time modest.
"""

from __future__ import annotations

import copy
import json
import math
import os
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trio_local
from tests.trio_local.hardening.wire import (
    ADAM,
    MODEL,
    V1,
    Wire,
    body_of,
    datum,
    forward_payload,
    lora,
    sample_body,
)
from trio_local.background import LocalService

EXAMPLES = int(os.environ.get("TRIO_LOCAL_FUZZ_EXAMPLES", "40"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,  # the same cases on every run: a CI failure reproduces locally
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
COUNTS: dict[str, int] = {}
FIRST_FREE_INDEX = 3  # the world's run took events 1 (init_run) and 2 (save_weights)


class World:
    """A running service and one real object of each kind for the paths to point at."""

    def __init__(self, service: LocalService, root: Path) -> None:
        self.service = service
        self.root = root
        self.wire = Wire(service, timeout=30)
        self.session = self.wire.session()
        self.run = self.wire.training_run(self.session)
        init = {"base_model": MODEL, "lora_config": lora(4)}
        started = self.wire.result(self.run, self.wire.event(self.run, "trainer.init_run", init, 1))
        assert started["status"] == "succeeded"
        saved = self.wire.event(self.run, "trainer.save_weights", {"name": "fuzz-target"}, 2)
        self.checkpoint_uri = self.wire.result(self.run, saved)["result"]["checkpoint"]["uri"]
        listed = self.wire.control("GET", f"{V1}/checkpoints").json()["checkpoints"]
        self.checkpoint_id = listed[0]["checkpoint_cuid"]
        self.sampler = self.wire.sampling_run(self.session)
        self.next_index = FIRST_FREE_INDEX  # each event failed at submit uses up its index
        self.before = sorted(p.name for p in root.iterdir())


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("fuzz")
    with trio_local.serve_in_background(data_dir=root / "data", configure_sdk=False) as running:
        state = World(running, root)
        yield state
        state.wire.close()
    print("\nfuzz cases per endpoint group:", json.dumps(COUNTS, sort_keys=True))


def assert_refused(world: World, answer: httpx.Response, group: str) -> None:
    COUNTS[group] = COUNTS.get(group, 0) + 1
    assert 400 <= answer.status_code < 500, (group, answer.status_code, answer.content[:300])
    assert answer.content, "a refusal names its reason"
    # trio-local answers its own bugs with a 4xx too (the SDK retries 5xx): tell them apart
    assert b"internal_error" not in answer.content, (group, answer.content[:300])


def assert_event_refused(world: World, answer: httpx.Response, group: str) -> None:
    """A malformed envelope is a 4xx; a bad value in a well-formed event is that event's
    failure (the SDK survives that, not an error at submit), and it uses up its index."""
    if answer.status_code != 200:
        assert_refused(world, answer, group)
        return
    COUNTS[group] = COUNTS.get(group, 0) + 1
    body = body_of(answer)
    assert body["status"] == "failed", (group, body)  # never accepted, so never run
    assert body["error"]["code"] != "internal_error", (group, body)
    assert body["error"]["message"], "a refusal names its reason"
    world.next_index += 1


def assert_healthy(world: World) -> None:
    assert world.wire.control("GET", "/models").status_code == 200
    assert sorted(p.name for p in world.root.iterdir()) == world.before  # nothing wrote outside
    assert not list(Path.cwd().glob("*fuzz-escape*"))


# hostile values
HUGE_INTS = st.sampled_from([2**63, 2**64 - 1, 2**64, 2**100, -(2**63) - 1, -(2**70)])
MSGPACK_HUGE_INTS = st.sampled_from([2**63, 2**64 - 1])  # past int64, within msgpack
NON_FINITE = st.sampled_from([math.nan, math.inf, -math.inf])
CONTAINERS = st.sampled_from([[], {}, [1, 2], {"x": 1}, [[[]]]])
HOSTILE_IDS = st.one_of(
    st.sampled_from(
        [
            "..",
            "../..",
            "x/../..",
            "%2e%2e",
            "../../fuzz-escape",
            "/etc/passwd",
            "a" * 5000,
            "\u0000",
            "ck_\n",
            "tr_;DROP TABLE checkpoints",
        ]
    ),
    st.text(min_size=1, max_size=40),
)


def in_path(ident: str) -> str:
    """One path segment, dots too: clients fold a literal `..` away before sending it."""
    return urllib.parse.quote(ident, safe="").replace(".", "%2E")


def hostile_for(value: Any, *, msgpack_wire: bool) -> st.SearchStrategy[Any]:
    """Values that no field of `value`'s kind may accept."""
    huge = MSGPACK_HUGE_INTS if msgpack_wire else HUGE_INTS
    if isinstance(value, bool | str | int):
        return st.one_of(NON_FINITE, huge, CONTAINERS)
    if isinstance(value, float):  # an int of any size is a valid float: only these are not
        return st.one_of(NON_FINITE, CONTAINERS)
    if isinstance(value, dict):
        return st.one_of(
            st.just([1]), st.builds(lambda bad: {"inner": bad}, st.one_of(NON_FINITE, huge))
        )
    if isinstance(value, list):
        return st.one_of(
            st.just({"x": 1}), st.builds(lambda bad: [bad], st.one_of(NON_FINITE, huge))
        )
    return st.one_of(NON_FINITE, huge)


def leaves(value: Any, path: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(item, (*path, index))


def replaced(template: Any, path: tuple, new: Any) -> Any:
    result = copy.deepcopy(template)
    if not path:
        return new
    target = result
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = new
    return result


@st.composite
def mutated(draw: st.DrawFn, template: dict, *, skip: tuple = (), msgpack_wire: bool = False):
    """`template` with one hostile part: a field's value, or an unknown top-level key.

    Free-form fields whose content the protocol leaves open (`skip`, e.g. user_metadata's
    string values) are replaced as a whole but never descended into.
    """
    spots = [
        (path, value)
        for path, value in leaves(template)
        if path and not any(path[: len(s)] == s and len(path) > len(s) for s in skip)
    ]
    if draw(st.integers(0, 9)) == 0:
        key = draw(st.text(min_size=1, max_size=12).filter(lambda k: k not in template))
        return {**template, key: 1}
    path, value = draw(st.sampled_from(spots))
    return replaced(template, path, draw(hostile_for(value, msgpack_wire=msgpack_wire)))


# control plane bodies
def control_bodies(world: World) -> dict[str, tuple[str, str, dict]]:
    session_path = f"{V1}/service-sessions/{world.session}"
    return {
        "session.create": (
            "POST",
            f"{V1}/service-sessions",
            {"sdk_version": "0.2.9", "user_metadata": {"k": 1.5}},
        ),
        "session.close": ("POST", f"{V1}/service-sessions/ss_fresh/close", {"status": "ENDED"}),
        "training_run.create": (
            "POST",
            f"{session_path}/training-runs",
            {
                "base_model": MODEL,
                "lora_rank": 4,
                "train_mlp": True,
                "train_attn": True,
                "train_unembed": False,
                "source_checkpoint_uri": "",
                "restore_optimizer": False,
                "seed": 3,
            },
        ),
        "training_run.update": (
            "PATCH",
            f"{session_path}/training-runs/{world.run['training_run_cuid']}",
            {"source_checkpoint_uri": world.checkpoint_uri, "restore_optimizer": False},
        ),
        "sampling_run.create": (
            "POST",
            f"{session_path}/sampling-runs",
            {"base_model": MODEL, "source_checkpoint_uri": ""},
        ),
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        "session.create",
        "session.close",
        "training_run.create",
        "training_run.update",
        "sampling_run.create",
    ],
)
def test_control_plane_bodies(world: World, name: str) -> None:
    method, path, template = control_bodies(world)[name]

    @FUZZ
    @given(body=mutated(template, skip=(("user_metadata",),)))  # its content is the client's
    def check(body: dict) -> None:
        content = json.dumps(body).encode()
        answer = world.wire.control(
            method, path, content=content, headers={"Content-Type": "application/json"}
        )
        assert_refused(world, answer, f"control:{name}")

    check()
    assert_healthy(world)


CONTROL_GETS = [
    ("GET", f"{V1}/service-sessions/{{id}}"),
    ("POST", f"{V1}/service-sessions/{{id}}/renew"),
    ("POST", f"{V1}/service-sessions/{{id}}/close"),
    ("GET", f"{V1}/training-runs/{{id}}"),
    ("POST", f"{V1}/training-runs/{{id}}/renew"),
    ("GET", f"{V1}/training-runs/{{id}}/checkpoints"),
    ("GET", f"{V1}/sampling-runs/{{id}}"),
    ("POST", f"{V1}/sampling-runs/{{id}}/renew"),
    ("GET", f"{V1}/checkpoints/{{id}}/download-url"),
    ("DELETE", f"{V1}/checkpoints/{{id}}"),
    ("POST", f"{V1}/service-sessions/{{id}}/training-runs"),
    ("POST", f"{V1}/service-sessions/{{id}}/sampling-runs"),
]


@pytest.mark.slow
def test_control_plane_hostile_ids(world: World) -> None:
    @FUZZ
    @given(route=st.sampled_from(CONTROL_GETS), ident=HOSTILE_IDS)
    def check(route: tuple[str, str], ident: str) -> None:
        method, template = route
        path = template.format(id=in_path(ident))
        answer = world.wire.control(method, path, json={"status": "ENDED"})
        assert_refused(world, answer, "control:ids")

    check()
    assert world.wire.control(
        "GET", f"{V1}/checkpoints/{world.checkpoint_id}/download-url"
    ).is_success
    assert_healthy(world)


@pytest.mark.slow
def test_control_plane_hostile_queries(world: World) -> None:
    paged = [f"{V1}/training-runs", f"{V1}/checkpoints", f"{V1}/service-sessions"]
    not_numbers = st.sampled_from(["1e400", "nan", "inf", "", "0x10", "1.5", "٣", "²"])
    bad = {
        "limit": st.one_of(
            not_numbers, st.sampled_from(["0", "1001"]), st.integers(max_value=0).map(str)
        ),
        "offset": st.one_of(
            not_numbers, st.integers(max_value=-1).map(str), st.integers(min_value=2**63).map(str)
        ),
    }

    @FUZZ
    @given(path=st.sampled_from(paged), key=st.sampled_from(sorted(bad)), data=st.data())
    def check(path: str, key: str, data: st.DataObject) -> None:
        value = data.draw(bad[key])
        answer = world.wire.control("GET", path, params={key: value})
        assert_refused(world, answer, "control:query")

    @FUZZ
    @given(uri=st.one_of(HOSTILE_IDS, st.just("")))
    def by_uri(uri: str) -> None:
        answer = world.wire.control(
            "GET", f"{V1}/training-runs/by-checkpoint-uri", params={"checkpoint_uri": uri}
        )
        assert_refused(world, answer, "control:by-checkpoint-uri")

    check()
    by_uri()
    assert_healthy(world)


@pytest.mark.slow
def test_both_planes_refuse_hostile_credentials(world: World) -> None:
    routes = [
        ("GET", "/api/models"),
        ("POST", f"/api{V1}/service-sessions"),
        ("GET", f"/api{V1}/checkpoints"),
        ("POST", "/actor/v1/events"),
        ("POST", "/actor/v1/client/heartbeat"),
        ("GET", "/actor/v1/events/event_0123456789ab"),
        ("POST", f"/actor/v1/sampling-runs/{world.sampler['sampling_run_cuid']}/sample"),
    ]
    token = world.run["actor_jwt"]["token"]
    forged = st.one_of(
        st.text(
            alphabet=st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=80
        ),
        st.just(token[:-1] + ("A" if token[-1] != "A" else "B")),  # one character off
        st.just(token.replace(world.run["training_run_cuid"], "tr_0000000000000000")),
    )

    @FUZZ
    @given(route=st.sampled_from(routes), credential=forged)
    def check(route: tuple[str, str], credential: str) -> None:
        method, path = route
        if credential in (token, world.service.api_key):
            return
        headers = {"X-API-Key": credential, "Authorization": f"Bearer {credential}"}
        answer = httpx.request(
            method, f"{world.service.base_url}{path}", headers=headers, content=b"{}", timeout=30
        )
        assert answer.status_code in (401, 403), (path, answer.status_code)
        assert b"internal_error" not in answer.content
        COUNTS["auth"] = COUNTS.get("auth", 0) + 1

    check()
    assert_healthy(world)


# actor plane
def event_templates(world: World) -> dict[str, dict]:
    return {
        "trainer.init_run": {"base_model": MODEL, "lora_config": lora(4), "load_optimizer": False},
        "trainer.forward_backward": forward_payload(
            [datum([1, 2, 3, 4], weights=[1.0, 1.0, 0.5, 0.0])]
        ),
        "trainer.forward": forward_payload(
            [datum([1, 2, 3, 4], logprobs=[-1.0] * 4, advantages=[0.5] * 4)], loss="ppo"
        ),
        "trainer.optimize_step": {"adam_params": dict(ADAM)},
        "trainer.save_state": {"name": "fuzzed", "ttl_seconds": 60, "overwrite": False},
        "trainer.save_weights": {"name": "fuzzed", "ttl_seconds": 60, "overwrite": True},
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    "kind",
    [
        "trainer.init_run",
        "trainer.forward_backward",
        "trainer.forward",
        "trainer.optimize_step",
        "trainer.save_state",
        "trainer.save_weights",
    ],
)
def test_actor_event_payloads(world: World, kind: str) -> None:
    template = event_templates(world)[kind]
    token = world.run["actor_jwt"]["token"]
    run_id = world.run["training_run_cuid"]

    @FUZZ
    @given(payload=mutated(template, skip=(("loss", "config"),), msgpack_wire=True))
    def check(payload: dict) -> None:
        # The run's next index: a payload that slipped through would be accepted, not 409.
        envelope = world.wire.envelope(run_id, kind, payload, world.next_index)
        assert_event_refused(world, world.wire.submit(token, envelope), f"actor:{kind}")

    check()
    assert_healthy(world)


@pytest.mark.slow
def test_actor_event_envelopes(world: World) -> None:
    token = world.run["actor_jwt"]["token"]
    template = world.wire.envelope(
        world.run["training_run_cuid"],
        "trainer.optimize_step",
        {"adam_params": dict(ADAM)},
        world.next_index,
    )

    @FUZZ
    @given(envelope=mutated(template, skip=(("payload",),), msgpack_wire=True))
    def check(envelope: dict) -> None:
        assert_refused(world, world.wire.submit(token, envelope), "actor:envelope")

    @FUZZ
    @given(raw=st.binary(max_size=200))
    def garbage(raw: bytes) -> None:
        answer = world.wire.actor(
            token,
            "POST",
            "/v1/events",
            content=raw,
            headers={"Content-Type": "application/msgpack"},
        )
        assert_refused(world, answer, "actor:bytes")

    @FUZZ
    @given(ident=HOSTILE_IDS)
    def poll(ident: str) -> None:
        answer = world.wire.actor(token, "GET", f"/v1/events/{in_path(ident)}")
        assert_refused(world, answer, "actor:poll")

    check()
    garbage()
    poll()
    assert_healthy(world)


@pytest.mark.slow
def test_actor_sample_requests(world: World) -> None:
    template = sample_body(
        [1, 2, 3],
        num_samples=1,
        return_text=True,
        return_token_logprobs=True,
        return_prompt_logprobs=False,
        topk_prompt_logprobs=0,
        sampling_params={"max_tokens": 2, "temperature": 0.7, "top_p": 0.9, "top_k": 5, "seed": 1},
    )

    @FUZZ
    @given(body=mutated(template))
    def check(body: dict) -> None:
        assert_refused(world, world.wire.sample(world.sampler, body), "actor:sample")

    @FUZZ
    @given(ident=HOSTILE_IDS)
    def other_run(ident: str) -> None:
        path = f"/v1/sampling-runs/{in_path(ident)}/sample"
        answer = world.wire.actor(
            world.sampler["actor_jwt"]["token"], "POST", path, json=sample_body([1, 2])
        )
        assert_refused(world, answer, "actor:sample-ids")

    check()
    other_run()
    assert_healthy(world)


@pytest.mark.slow
def test_signed_downloads_refuse_hostile_urls(world: World) -> None:
    @FUZZ
    @given(
        ident=st.one_of(HOSTILE_IDS, st.just(world.checkpoint_id)),
        expires=st.one_of(st.text(max_size=30), st.integers().map(str)),
        sig=st.text(max_size=60),
    )
    def check(ident: str, expires: str, sig: str) -> None:
        answer = httpx.get(
            f"{world.service.base_url}/files/checkpoints/{in_path(ident)}.tar",
            params={"expires": expires, "sig": sig},
            timeout=30,
        )
        assert_refused(world, answer, "files:download")

    check()
    assert_healthy(world)
