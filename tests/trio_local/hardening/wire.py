"""Raw requests on both of trio-local's planes, as the SDK sends them but with any value."""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

import httpx
import msgpack

from trio_local.background import LocalService

MODEL = "Qwen/Qwen3-4B-Instruct-2507"
V1 = "/openapi/v1"
EVENT_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"


def event_id() -> str:
    return "event_" + "".join(secrets.choice(EVENT_ALPHABET) for _ in range(12))


def lora(rank: int = 4) -> dict[str, Any]:
    return {"rank": rank, "train_mlp": True, "train_attn": True, "train_unembed": False}


def datum(tokens: list[int], **extra: Any) -> dict[str, Any]:
    return {
        "model_input": {"chunks": [{"type": "encoded_text", "tokens": tokens}]},
        "target_ids": tokens,
        **extra,
    }


def forward_payload(data: list[dict[str, Any]], loss: str = "cross_entropy") -> dict[str, Any]:
    return {
        "data": data,
        "loss": {"type": loss, "config": {}},
        "gradient_accumulation": {
            "total_samples": len(data),
            "total_active_tokens": 4,
            "total_advantage_tokens": 0,
        },
    }


ADAM = {
    "learning_rate": 1e-4,
    "beta1": 0.9,
    "beta2": 0.95,
    "eps": 1e-12,
    "weight_decay": 0.0,
    "grad_clip_norm": 0.0,
}


class Wire:
    def __init__(self, service: LocalService, timeout: float = 60.0) -> None:
        self.base = service.base_url
        self.http = httpx.Client(timeout=timeout, headers={"X-API-Key": service.api_key})

    def close(self) -> None:
        self.http.close()

    # control plane
    def control(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return self.http.request(method, f"{self.base}/api{path}", **kwargs)

    def session(self) -> str:
        answer = self.control("POST", f"{V1}/service-sessions", json={"sdk_version": "0.2.9"})
        answer.raise_for_status()
        return answer.json()["service_session_cuid"]

    def close_session(self, session: str) -> None:
        path = f"{V1}/service-sessions/{session}/close"
        self.control("POST", path, json={"status": "ENDED"}).raise_for_status()

    def create_training_run(self, session: str, **fields: Any) -> httpx.Response:
        body = {
            "base_model": MODEL,
            "lora_rank": 4,
            "train_mlp": True,
            "train_attn": True,
            "train_unembed": False,
            **fields,
        }
        return self.control("POST", f"{V1}/service-sessions/{session}/training-runs", json=body)

    def training_run(self, session: str, **fields: Any) -> dict[str, Any]:
        answer = self.create_training_run(session, **fields)
        answer.raise_for_status()
        return answer.json()

    def run_status(self, run_id: str) -> str:
        return self.control("GET", f"{V1}/training-runs/{run_id}").json()["status"]

    def sampling_run(self, session: str) -> dict[str, Any]:
        path = f"{V1}/service-sessions/{session}/sampling-runs"
        answer = self.control("POST", path, json={"base_model": MODEL})
        answer.raise_for_status()
        return answer.json()

    # actor plane
    def actor(self, token: str, method: str, path: str, **kwargs: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}", **kwargs.pop("headers", {})}
        return self.http.request(method, f"{self.base}/actor{path}", headers=headers, **kwargs)

    def envelope(
        self, run_id: str, kind: str, payload: Any, index: int, **metadata: Any
    ) -> dict[str, Any]:
        return {
            "version": 1,
            "event_id": event_id(),
            "type": kind,
            "metadata": {
                "index": index,
                "step": 0,
                "timestamp": int(time.time() * 1000),
                "sdk": "pytrio",
                "sdk_version": "0.2.9",
                "run_id": run_id,
                **metadata,
            },
            "payload": payload,
        }

    def submit(self, token: str, envelope: Any) -> httpx.Response:
        return self.actor(
            token,
            "POST",
            "/v1/events",
            content=msgpack.packb(envelope, use_bin_type=True),
            headers={"Content-Type": "application/msgpack", "Accept": "application/msgpack"},
        )

    def event(self, run: dict[str, Any], kind: str, payload: Any, index: int) -> httpx.Response:
        token = run["actor_jwt"]["token"]
        return self.submit(token, self.envelope(run["training_run_cuid"], kind, payload, index))

    def result(self, run: dict[str, Any], submitted: httpx.Response) -> dict[str, Any]:
        """Poll an accepted event until it completes."""
        answer = body_of(submitted)
        while answer["status"] in ("accepted", "running"):
            polled = self.actor(
                run["actor_jwt"]["token"],
                "GET",
                f"/v1/events/{answer['event_id']}",
                headers={"Prefer": "wait=30", "Accept": "application/msgpack"},
            )
            answer = body_of(polled)
        return answer

    def sample(self, run: dict[str, Any], body: Any) -> httpx.Response:
        path = f"/v1/sampling-runs/{run['sampling_run_cuid']}/sample"
        content = json.dumps(body).encode()  # NaN and Infinity as Python writes them
        headers = {"Content-Type": "application/json"}
        return self.actor(run["actor_jwt"]["token"], "POST", path, content=content, headers=headers)


def body_of(answer: httpx.Response) -> dict[str, Any]:
    """An answer of either plane: msgpack or JSON, by its content type."""
    if answer.headers.get("content-type", "").startswith("application/msgpack"):
        return msgpack.unpackb(answer.content)
    return answer.json()


def sample_body(tokens: list[int], **fields: Any) -> dict[str, Any]:
    return {
        "request_id": "req_test",
        "prompt": {"chunks": [{"type": "encoded_text", "tokens": tokens}]},
        "sampling_params": {"max_tokens": 2},
        **fields,
    }
