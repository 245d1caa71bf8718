"""An evaluation harness that keeps its sampling settings as plain dicts: in a config dataclass,
as a class attribute, and returned by a helper."""

from dataclasses import dataclass, field

import pytrio as trio


@dataclass
class EvalConfig:
    base_model: str = "Qwen/Qwen3-8B"
    sampling: dict = field(default_factory=lambda: {"max_tokens": 256, "temperature": 0.0})


def greedy_settings():
    return {"max_tokens": 64, "temperature": 0.0}


class Evaluator:
    CREATIVE = dict(max_tokens=128, temperature=0.9)

    def __init__(self, cfg: EvalConfig):
        self.cfg = cfg
        service = trio.ServiceClient()
        self.sampler = service.create_sampling_client(base_model=cfg.base_model)

    def run(self, prompt, cfg: EvalConfig):
        a = self.sampler.sample(prompt, 1, sampling_params=cfg.sampling).result()  # bug: PTR205
        b = self.sampler.sample(prompt, 1, greedy_settings()).result()  # bug: PTR205
        c = self.sampler.sample(prompt, 1, self.CREATIVE).result()  # bug: PTR205
        return a, b, c
