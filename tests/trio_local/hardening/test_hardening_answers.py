"""Answers that never mislead: an event lost in a restart says its run ended, and an error no
handler expected keeps the client's keep-alive connection."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest

import trio_local
from tests.trio_local.hardening.wire import V1, Wire, body_of, datum, forward_payload, lora
from trio_local.service.checkpoints import Checkpoints


def test_an_event_in_flight_at_a_restart_answers_that_its_run_ended(tmp_path: Path) -> None:
    """Once `404 event_not_found`: its record died with the old process."""
    options = {"data_dir": tmp_path, "configure_sdk": False, "warmup": False}
    with trio_local.serve_in_background(**options) as first:
        wire = Wire(first)
        run = wire.training_run(wire.session())
        init = {"base_model": run["model_id"], "lora_config": lora()}
        assert wire.result(run, wire.event(run, "trainer.init_run", init, 1))["status"] == (
            "succeeded"
        )
        pending = body_of(wire.event(run, "trainer.forward", forward_payload([datum([1, 2])]), 2))
        wire.close()
    with trio_local.serve_in_background(**options) as second:
        wire = Wire(second)
        token = run["actor_jwt"]["token"]
        answer = wire.actor(token, "GET", f"/v1/events/{pending['event_id']}")
        body = body_of(answer)
        assert answer.status_code == 410 and body["code"] == "training_run_ended", body
        assert "restarted" in body["message"]
        # any event of an ended run says so
        assert wire.actor(token, "GET", "/v1/events/event_000000000000").status_code == 410
        wire.close()


def _request(connection: http.client.HTTPConnection, path: str, key: str) -> tuple[int, dict]:
    connection.request("GET", path, headers={"X-API-Key": key})
    response = connection.getresponse()
    return response.status, json.loads(response.read() or b"{}")


def test_an_unexpected_error_keeps_the_keep_alive_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once every answer of the catch-all handler dropped the connection: the next request on
    it was reset, and the SDK retried it."""

    def broken(self: Checkpoints) -> None:
        raise RuntimeError("a bug")

    with trio_local.serve_in_background(
        data_dir=tmp_path, configure_sdk=False, warmup=False
    ) as service:
        wire = Wire(service)
        run = wire.training_run(wire.session())["training_run_cuid"]
        wire.close()
        monkeypatch.setattr(Checkpoints, "sweep_expired", broken)
        url = urlsplit(service.base_url)
        connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
        status, body = _request(
            connection, f"/api{V1}/training-runs/{run}/checkpoints", service.api_key
        )
        assert status == 400 and body["code"] == "internal_error", body
        socket = connection.sock
        assert socket is not None  # the answer did not ask to close
        status, body = _request(connection, f"/api{V1}/training-runs/{run}", service.api_key)
        assert status == 200 and body["training_run_cuid"] == run
        assert connection.sock is socket  # the same connection answered
        connection.close()
