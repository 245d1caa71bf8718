"""Keys, bad input and limits: readable SDK errors, and the service keeps serving."""

from __future__ import annotations

import math
import stat
import time

import httpx
import msgpack
import pytest
import pytrio as trio
from pytrio.errors.base import PyTrioError
from pytrio.errors.event import EventFailedError

from tests.support.local import MODEL
from trio_local.catalogue import SAMPLER_LIMITS
from trio_local.config import ConfigError, ServeConfig


def test_api_key_is_generated_once_and_stored_0600(service) -> None:
    key_file = service.data_dir / "api_key"
    assert key_file.read_text() == service.api_key
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert service.api_key.startswith("trio-local-") and len(service.api_key) > 30


def test_wrong_key_gets_the_sdks_unauthorized_error(service) -> None:
    with pytest.raises(PyTrioError) as error:
        trio.ServiceClient(api_key="trio-local-not-the-key")
    assert error.value.code == "unauthorized"
    assert "not-the-key" not in str(error.value)
    # and the service keeps serving the right key
    assert MODEL in trio.ServiceClient().get_supported_models()


def test_unknown_model_and_unknown_run_are_readable_404s(client) -> None:
    with pytest.raises(PyTrioError) as error:
        client.create_lora_training_client(base_model="meta-llama/Llama-9-1B", rank=8)
    assert error.value.code == "model_not_found"
    assert MODEL in str(error.value)
    with pytest.raises(PyTrioError) as error:
        client.create_rest_client().get_training_run("tr_does_not_exist").result()
    assert error.value.code == "training_run_not_found"


def _actor_token(service, client) -> tuple[str, str]:
    """A real run and its actor token, straight from the control plane."""
    headers = {"X-API-Key": service.api_key}
    api = f"{service.base_url}/api/openapi/v1"
    session = httpx.post(
        f"{api}/service-sessions", json={"sdk_version": "0.2.9"}, headers=headers
    ).json()["service_session_cuid"]
    created = httpx.post(
        f"{api}/service-sessions/{session}/training-runs",
        json={
            "base_model": MODEL,
            "lora_rank": 4,
            "train_mlp": True,
            "train_attn": True,
            "train_unembed": False,
        },
        headers=headers,
        timeout=60,
    ).json()
    return created["training_run_cuid"], created["actor_jwt"]["token"]


def test_malformed_events_get_400_naming_the_field(service, client) -> None:
    run_id, token = _actor_token(service, client)
    url = f"{service.base_url}/actor/v1/events"
    auth = {"Authorization": f"Bearer {token}", "Content-Type": "application/msgpack"}
    garbage = httpx.post(url, content=b"\xc1not msgpack", headers=auth)
    assert garbage.status_code == 400
    envelope = _event(
        run_id,
        1,
        "event_0123456789ab",
        "trainer.optimize_step",
        {"adam_params": {"learning_rate": 0.1}},
    )
    bad = httpx.post(url, content=envelope, headers=auth)
    body = (
        msgpack.unpackb(bad.content)
        if bad.headers["content-type"].endswith("msgpack")
        else bad.json()
    )
    assert bad.status_code == 400 and body["code"] == "invalid_request_body"
    assert "adam_params.beta1" in body["message"]
    other = {**auth, "Authorization": "Bearer forged.123.abc"}
    assert httpx.post(url, content=envelope, headers=other).status_code == 401


def test_an_event_for_an_uninitialised_run_fails_readably(service, client) -> None:
    run_id, token = _actor_token(service, client)
    url = f"{service.base_url}/actor/v1/events"
    auth = {"Authorization": f"Bearer {token}", "Content-Type": "application/msgpack"}
    event_id = "event_0123456789ac"
    envelope = _event(run_id, 1, event_id, "trainer.save_state", {"name": "never-initialised"})
    accepted = msgpack.unpackb(httpx.post(url, content=envelope, headers=auth).content)
    assert accepted["status"] in {"accepted", "running", "failed"}
    again = httpx.post(url, content=envelope, headers=auth)
    assert again.status_code == 409 and again.json()["code"] == "event_exists"
    polled = msgpack.unpackb(
        httpx.get(f"{url}/{event_id}", headers={**auth, "Prefer": "wait=30"}).content
    )
    assert polled["status"] == "failed"
    assert polled["error"]["code"] == "run_not_initialized"


def test_bad_checkpoint_name_is_refused_before_and_by_the_server(client) -> None:
    training = client.create_lora_training_client(base_model=MODEL, rank=4, seed=1)
    with pytest.raises(PyTrioError) as error:
        training.save_state("../escape").result()
    assert error.value.code == "validation.invalid_checkpoint_name"


def test_over_long_sample_is_refused_with_the_limit_named(client) -> None:
    sampler = client.create_sampling_client(base_model=MODEL)
    with pytest.raises(PyTrioError) as error:
        sampler.sample(
            prompt=trio.ModelInput.from_ints([9707] * 10),
            sampling_params=trio.SamplingParams(max_tokens=SAMPLER_LIMITS.max_seq_len),
        ).result()
    assert error.value.code == "sample_too_long"
    assert "max_tokens" in str(error.value)
    ok = sampler.sample(
        prompt=trio.ModelInput.from_ints([9707]), sampling_params=trio.SamplingParams(max_tokens=2)
    ).result()
    assert len(ok.sequences[0].tokens) <= 2


def test_missing_checkpoint_for_a_sampler_is_a_404(client) -> None:
    with pytest.raises(PyTrioError) as error:
        client.create_sampling_client(
            base_model=MODEL, model_path="trio://tr_x/sampler_weights/none"
        )
    assert error.value.code == "checkpoint_not_found"


def test_request_bodies_over_the_limit_get_413(service) -> None:
    big = b"x" * (3 * 1024 * 1024)
    response = httpx.post(
        f"{service.base_url}/api/openapi/v1/service-sessions",
        content=big,
        headers={"X-API-Key": service.api_key, "Content-Type": "application/json"},
    )
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"


def test_non_loopback_bind_needs_an_explicit_key(tmp_path) -> None:
    with pytest.raises(ConfigError, match="--api-key"):
        ServeConfig(host="0.0.0.0", data_dir=tmp_path).validate()
    ServeConfig(host="0.0.0.0", data_dir=tmp_path, api_key="a-long-chosen-key").validate()
    ServeConfig(host="127.0.0.1", data_dir=tmp_path).validate()


def test_secrets_stay_out_of_the_data_listing(service) -> None:
    secret_files = {p.name for p in service.data_dir.iterdir() if p.is_file()}
    assert {"api_key", "server_secret"} <= secret_files
    for name in ("api_key", "server_secret"):
        assert stat.S_IMODE((service.data_dir / name).stat().st_mode) == 0o600


def test_the_telemetry_sink_accepts_batches_with_the_key_only(service) -> None:
    url = f"{service.base_url}/api/telemetry/event"
    batch = {"schema_version": 1, "events": []}
    assert httpx.post(url, json=batch).status_code == 401
    ok = httpx.post(url, json=batch, headers={"X-API-Key": service.api_key})
    assert ok.status_code == 204


def _event(run_id: str, index: int, event_id: str, kind: str, payload: dict) -> bytes:
    return msgpack.packb(
        {
            "version": 1,
            "event_id": event_id,
            "type": kind,
            "metadata": {
                "index": index,
                "step": 0,
                "timestamp": 0,
                "sdk": "pytrio",
                "sdk_version": "0.2.9",
                "run_id": run_id,
            },
            "payload": payload,
        }
    )


def test_the_server_enforces_checkpoint_names_too(service, client) -> None:
    run_id, token = _actor_token(service, client)
    url = f"{service.base_url}/actor/v1/events"
    auth = {"Authorization": f"Bearer {token}", "Content-Type": "application/msgpack"}
    init = {
        "base_model": MODEL,
        "load_optimizer": False,
        "lora_config": {"rank": 4, "train_mlp": True, "train_attn": True, "train_unembed": False},
    }
    save = {"name": "../escape", "overwrite": False, "visibility": "WORKSPACE"}
    httpx.post(
        url, content=_event(run_id, 1, "event_0000000000a1", "trainer.init_run", init), headers=auth
    )
    refused = httpx.post(
        url,
        content=_event(run_id, 2, "event_0000000000a2", "trainer.save_state", save),
        headers=auth,
    )
    # refused at the edge, before it is queued: that event fails naming the field and the
    # SDK's pattern (an HTTP error here would break the SDK's client for good)
    assert refused.status_code == 200
    answer = msgpack.unpackb(refused.content)
    assert answer["status"] == "failed" and "payload.name" in answer["error"]["message"]
    assert not any(service.data_dir.rglob("escape"))


BAD_ADAM = [
    {"learning_rate": float("inf")},
    {"learning_rate": float("nan")},
    {"learning_rate": -1.0},
    {"beta1": 5.0},
    {"eps": 0.0},
]


def test_a_refused_event_costs_one_call_and_the_client_trains_on(client) -> None:
    """pytrio 0.2.9 marks its client broken for good after an error at event submission; a
    refused value must come back as that event's failure, and the next calls must work."""
    training = client.create_lora_training_client(base_model=MODEL, rank=4, seed=3)
    tokens = [9707, 1879, 11, 1879, 13]
    datum = trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": tokens[1:], "weights": [1.0] * 4},
    )
    before = training.forward([datum], "cross_entropy").result().metrics["loss_sum"]
    training.forward_backward([datum], "cross_entropy").result()
    for bad in BAD_ADAM:
        with pytest.raises(EventFailedError) as error:
            training.optim_step(trio.AdamParams(**bad)).result()
        name = next(iter(bad))
        assert error.value.code == "validation_failed", error.value
        # the SDK's hint for the code fits (not "could not be parsed. Check the SDK version")
        assert error.value.hint.startswith("Check the request arguments"), error.value.hint
        assert f"payload.adam_params.{name}" in str(error.value)
        after = training.forward([datum], "cross_entropy").result().metrics["loss_sum"]
        assert math.isfinite(after) and after == before  # nothing was applied
    policy = trio.Datum(
        model_input=datum.model_input,
        loss_fn_inputs={
            "target_tokens": tokens[1:],
            "logprobs": [-1.0] * 4,
            "advantages": [1.0] * 4,
        },
    )
    with pytest.raises(EventFailedError) as error:
        config = {"clip_low_threshold": math.nan}
        training.forward_backward([policy], "ppo", loss_fn_config=config).result()
    assert "payload.loss.config.clip_low_threshold" in str(error.value)
    with pytest.raises(EventFailedError) as error:
        training.save_state("too-long-lived", ttl_seconds=10**12).result()
    assert "payload.ttl_seconds" in str(error.value)
    # the same client still trains: the gradient kept from before the refusals is applied
    training.optim_step(trio.AdamParams(learning_rate=1e-2)).result()
    trained = training.forward([datum], "cross_entropy").result().metrics["loss_sum"]
    assert math.isfinite(trained) and trained < before


def test_actor_tokens_and_download_signatures_expire_and_never_cross(monkeypatch) -> None:
    import time

    from trio_local import security

    secret = b"s" * 32
    token, expires = security.issue_actor_token(secret, "tr_0123")
    assert security.verify_actor_token(secret, token) == "tr_0123"
    assert abs(expires - time.time() - security.TOKEN_TTL_S) < 5
    for forged in (token + "x", token.replace("tr_0123", "tr_0124"), "tr_0123", "a.b.c"):
        assert security.verify_actor_token(secret, forged) is None
    assert security.verify_actor_token(b"t" * 32, token) is None  # another service's secret
    later = time.time() + security.TOKEN_TTL_S + 5
    monkeypatch.setattr(time, "time", lambda: later)
    assert security.verify_actor_token(secret, token) is None  # expired
    monkeypatch.undo()
    expiry = int(time.time()) + 60
    signature = security.sign_download(secret, "ck_1", expiry)
    assert security.verify_download(secret, "ck_1", str(expiry), signature)
    assert not security.verify_download(secret, "ck_2", str(expiry), signature)
    assert not security.verify_download(secret, "ck_1", str(expiry - 120), signature)
    # an actor token's signature never passes as a download signature (salts differ)
    assert not security.verify_download(secret, "tr_0123", token.split(".")[1], token.split(".")[2])


def test_a_signature_spelled_with_other_spare_bits_is_refused() -> None:
    """Base64 decoding ignores the spare low bits of a signature's last character: changing
    them gives a string that was never issued but decodes to the same HMAC. It is refused, for
    actor tokens and download signatures alike, whatever the signature's last character."""
    from trio_local import security

    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

    def respelled(signature: str) -> str:  # the lowest of the 2 spare bits flipped
        return signature[:-1] + alphabet[alphabet.index(signature[-1]) ^ 1]

    last_characters = set()
    for run in range(40):  # signatures ending in many of the 16 possible characters
        secret = bytes([run]) * 32
        token, _ = security.issue_actor_token(secret, f"tr_{run:04d}")
        value, _, signature = token.rpartition(".")
        last_characters.add(signature[-1])
        assert security.verify_actor_token(secret, token) == f"tr_{run:04d}"
        assert security.verify_actor_token(secret, f"{value}.{respelled(signature)}") is None
        expiry = int(time.time()) + 60
        download = security.sign_download(secret, "ck_1", expiry)
        assert security.verify_download(secret, "ck_1", str(expiry), download)
        assert not security.verify_download(secret, "ck_1", str(expiry), respelled(download))
        assert not security.verify_download(secret, "ck_1", str(expiry), download + "=")
    assert len(last_characters) >= 8


def test_actor_tokens_and_download_signatures_are_itsdangerous_signatures() -> None:
    """Signed by the library (TimestampSigner / Signer, HMAC-SHA256, one salt per purpose), not
    by hand: each side reads what the other signs, and nothing else."""
    import hashlib

    from itsdangerous import Signer, TimestampSigner

    from trio_local import security

    secret = b"k" * 32
    actor = TimestampSigner(secret, salt="trio-local.actor-token", digest_method=hashlib.sha256)
    token, _ = security.issue_actor_token(secret, "tr_0123")
    assert actor.unsign(token, max_age=60) == b"tr_0123"
    assert security.verify_actor_token(secret, actor.sign("tr_9").decode()) == "tr_9"
    download = Signer(secret, salt="trio-local.download", digest_method=hashlib.sha256)
    signature = security.sign_download(secret, "ck_1", 1_900_000_000)
    assert download.verify_signature(b"ck_1:1900000000", signature.encode())
    other = Signer(secret, salt="another.purpose", digest_method=hashlib.sha256)
    forged = other.get_signature("ck_1:1900000000").decode()
    assert not security.verify_download(secret, "ck_1", "1900000000", forged)
