"""The same harness with `SamplingParams` everywhere (built from dicts where that is handy)."""

from dataclasses import dataclass, field

import pytrio as trio


@dataclass
class EvalConfig:
    base_model: str = "Qwen/Qwen3-8B"
    sampling: dict = field(default_factory=lambda: {"max_tokens": 256, "temperature": 0.0})


def greedy_settings():
    return trio.SamplingParams(max_tokens=64, temperature=0.0)


class Evaluator:
    CREATIVE = trio.SamplingParams(max_tokens=128, temperature=0.9)

    def __init__(self, cfg: EvalConfig):
        self.cfg = cfg
        service = trio.ServiceClient()
        self.sampler = service.create_sampling_client(base_model=cfg.base_model)

    def run(self, prompt, cfg: EvalConfig):
        params = trio.SamplingParams(**cfg.sampling)
        a = self.sampler.sample(prompt, 1, sampling_params=params).result()
        b = self.sampler.sample(prompt, 1, greedy_settings()).result()
        c = self.sampler.sample(prompt, 1, self.CREATIVE).result()
        return a, b, c
