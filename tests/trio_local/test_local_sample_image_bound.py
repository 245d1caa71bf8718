"""A sample request's size bound counts an image by the positions the engine gives it (from the
image's header), not by the client's `expected_tokens`: an image prompt too large for an answer
is refused like a text prompt of the same length, before any model work."""

from __future__ import annotations

import base64
import struct
from pathlib import Path

import httpx

import trio_local
from pytrio_facts import vision

VISION_MODEL = "Qwen/Qwen3-VL-2B-Instruct"
V1 = "/openapi/v1"
SIDE = 8000  # the processor's largest image: 16384 positions


def jpeg_header(width: int, height: int) -> bytes:
    """SOI, a JFIF APP0 segment, then a baseline SOF0 frame header (no scan data)."""
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof0 = b"\xff\xc0" + struct.pack(">HBHHB", 17, 8, height, width, 3) + b"\x01\x22\x00" * 3
    return b"\xff\xd8" + app0 + sof0 + b"\xff\xd9"


def request(chunks: list[dict[str, object]]) -> dict[str, object]:
    return {
        "request_id": "req_bound",
        "prompt": {"chunks": chunks},
        "sampling_params": {"max_tokens": 1},
        "topk_prompt_logprobs": 20,
    }


def test_images_that_claim_few_positions_are_bounded_by_their_real_size(tmp_path: Path) -> None:
    image = {
        "type": "image",
        "format": "jpeg",
        "data": base64.b64encode(jpeg_header(SIDE, SIDE)).decode(),
        "expected_tokens": 1,  # the client's estimate: far too small
    }
    positions = 2 * vision.image_tokens(VISION_MODEL, SIDE, SIDE)
    text = {"type": "encoded_text", "tokens": [1] * positions}
    with (
        trio_local.serve_in_background(
            data_dir=tmp_path, configure_sdk=False, warmup=False
        ) as service,
        httpx.Client(base_url=service.base_url, timeout=120) as http,
    ):
        control = {"X-API-Key": service.api_key}
        session = http.post(
            f"/api{V1}/service-sessions", json={"sdk_version": "0.2.9"}, headers=control
        ).json()["service_session_cuid"]
        run = http.post(
            f"/api{V1}/service-sessions/{session}/sampling-runs",
            json={"base_model": VISION_MODEL},
            headers=control,
        ).json()
        path = f"/actor/v1/sampling-runs/{run['sampling_run_cuid']}/sample"
        actor = {"Authorization": f"Bearer {run['actor_jwt']['token']}"}
        by_text = http.post(path, json=request([text]), headers=actor)
        by_images = http.post(path, json=request([image, image]), headers=actor)
        # A small prompt is still answered (which also lets the model the run began building
        # finish before the service stops: a build cut off at exit aborts the process).
        small = {**request([{"type": "encoded_text", "tokens": [1, 2, 3]}])}
        small["topk_prompt_logprobs"] = 0
        answered = http.post(path, json=small, headers=actor)
    assert answered.status_code == 200, answered.text
    assert by_text.status_code == by_images.status_code == 400, by_images.text
    assert by_text.json()["code"] == by_images.json()["code"] == "response_too_large"
    # The same message: the prompt counted at its real length, whatever expected_tokens says.
    assert by_images.json() == by_text.json()
    assert f"prompt of {positions} tokens" in by_images.json()["message"]
