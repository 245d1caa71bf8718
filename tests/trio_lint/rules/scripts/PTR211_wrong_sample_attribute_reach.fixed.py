"""An evaluator that samples in one method and reads the response in another, and a helper
whose returned response is read with vLLM's attribute name."""

import pytrio as trio


class Evaluator:
    def __init__(self, sampler: trio.SamplingClient):
        self.sampler = sampler

    def generate(self, prompt, params):
        self.last = self.sampler.sample(prompt, 4, params).result()

    def texts(self):
        return [sequence.text for sequence in self.last.sequences]  # bug: PTR211


def generate(sampler: trio.SamplingClient, prompt, params):
    return sampler.sample(prompt, 4, params).result()


def best(sampler: trio.SamplingClient, prompt, params):
    response = generate(sampler, prompt, params)
    return max(response.sequences, key=lambda s: len(s.tokens))  # bug: PTR211
