"""Types from evidence: where no route carries a value's type, the code's own shape does (a call
whose name and keywords fit one client method, a constant-key dict entry read with `.get()`, a
plain-container annotation fed from call sites, what `await asyncio.gather(...)` and
`as_completed` give). Each shape here was missed before the evidence it names."""

from __future__ import annotations

from trio_lint import lint_source


def _found(code: str) -> list[tuple[str, int]]:
    return sorted((d.code, d.line) for d in lint_source(code, path="x.py"))


def test_a_constant_key_dict_entry_read_with_get_is_what_was_stored() -> None:
    code = (
        "import pytrio as trio\n"
        "_state = {}\n"
        "def startup():\n"
        "    _state['sampler'] = trio.ServiceClient().create_sampling_client(base_model='m')\n"
        "def handler(prompt, params):\n"
        "    sampler = _state.get('sampler')\n"
        "    return sampler.sample(prompt, 1, params).result().samples\n"
    )
    assert ("PTR211", 7) in _found(code)
    # another key, or a default that is not None: nothing is known
    assert _found(code.replace(".get('sampler')", ".get('other')")) == []
    assert _found(code.replace(".get('sampler')", ".get('sampler', fallback)")) == []


def test_a_call_fitting_one_client_method_types_its_receiver() -> None:
    code = (
        "import pytrio as trio\n"
        "def reply(engine, prompt):\n"
        "    out = engine.sample(prompt=prompt, num_samples=1,\n"
        "                        sampling_params=trio.SamplingParams(max_tokens=8)).result()\n"
        "    return out.samples\n"
    )
    assert ("PTR211", 5) in _found(code)
    # one keyword is no evidence (torch, vLLM and HF have `sample` methods too)
    assert _found(code.replace("prompt=prompt, num_samples=1,", "prompt,")) == []
    # a keyword SamplingClient.sample does not take: another library's method
    assert _found(code.replace("num_samples=1", "n=1")) == []
    # no SDK import, no evidence
    assert _found(code.replace("import pytrio as trio\n", "import vllm as trio\n")) == []


def test_a_plain_container_annotation_is_typed_by_its_call_sites() -> None:
    code = (
        "import pytrio as trio\n"
        "def log_metrics(metrics: dict[str, float]) -> float:\n"
        "    return metrics['loss:sum']\n"
        "def step(train: trio.TrainingClient, batch):\n"
        "    log_metrics(train.forward_backward(batch, 'cross_entropy').result().metrics)\n"
    )
    assert ("PTR308", 3) in _found(code)
    # another caller passes something else: the call sites disagree
    assert _found(code + "log_metrics({'loss:sum': 1.0})\n") == []


def test_gather_gives_a_list_of_what_awaiting_each_item_gives() -> None:
    code = (
        "import asyncio\nimport pytrio as trio\n"
        "async def run(sampler: trio.SamplingClient, prompts, sp):\n"
        "    results = await asyncio.gather(\n"
        "        *[sampler.sample_async(prompt=p, num_samples=1, sampling_params=sp)\n"
        "          for p in prompts])\n"
        "    print(results[0].samples)\n"
        "    again = await asyncio.gather(*results)\n"
        "    for fut in asyncio.as_completed(\n"
        "            [sampler.sample_async(prompt=p, num_samples=1, sampling_params=sp)\n"
        "             for p in prompts]):\n"
        "        print((await fut).sequence)\n"
    )
    found = _found(code)
    assert ("PTR211", 7) in found  # an item of the gathered list is a SampleResponse
    assert ("PTR104", 8) in found  # gathered twice
    assert ("PTR213", 12) in found  # as_completed gives the awaited SampleResponse
    # return_exceptions=True mixes exceptions into the list: no type
    mixed = code.replace("for p in prompts])\n", "for p in prompts], return_exceptions=True)\n", 1)
    assert ("PTR211", 7) not in _found(mixed)


def test_gathering_training_futures_twice_is_right() -> None:
    code = (
        "import asyncio\nimport pytrio as trio\n"
        "async def steps(train: trio.TrainingClient, batches):\n"
        "    futures = await asyncio.gather(\n"
        "        *[train.forward_backward_async(b, 'cross_entropy') for b in batches])\n"
        "    results = await asyncio.gather(*futures)\n"
        "    return [r.metrics['loss_sum'] for r in results]\n"
    )
    assert _found(code) == []


def test_a_parameter_read_by_key_and_passed_back_to_its_own_function_ends() -> None:
    # Call-site evidence for `inputs` leads to `inputs["a"]`, whose dict is `inputs` again: the
    # value flow must stop at the cycle (it once recursed until RecursionError, PTR903).
    recursive = (
        "import pytrio as trio\n"
        "def forward(inputs):\n"
        "    path = inputs['a']\n"
        "    return forward(path)\n"
    )
    method = (
        "import pytrio as trio\n"
        "class M:\n"
        "    def forward(self, inputs):\n"
        "        path = inputs['a']\n"
        "        return self.other.forward(path)\n"
    )
    for code in (recursive, method):
        assert [d.code for d in lint_source(code, path="x.py", config={"select": ["ALL"]})] == []
