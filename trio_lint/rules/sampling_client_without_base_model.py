"""PTR209 sampling-client-without-base-model: `ServiceClient.create_sampling_client` needs it."""

from __future__ import annotations

import ast

from trio_lint.output.diagnostics import Severity
from trio_lint.rules._common import argument, has_splat
from trio_lint.rules.base import Invalid, LooksAt, Rule, Valid
from trio_lint.semantics.receivers import Kind

_METHODS = ("create_sampling_client", "create_sampling_client_async")


class SamplingClientWithoutBaseModel(Rule):
    code = "PTR209"
    looks_at = LooksAt(calls=frozenset(_METHODS))
    name = "sampling-client-without-base-model"
    message = (
        "`ServiceClient.{method}` needs `base_model`; for trained weights call "
        "`train.create_sampling_client(model_path)` on the TrainingClient, or pass both"
    )
    severity = Severity.ERROR
    # Facts of PyTRIO's own SDK (not Tinker's): see the doc's References.
    pytrio_only = True
    doc = """
## What it does
Flags `create_sampling_client(model_path=...)` on a ServiceClient without `base_model`.

## Why is this bad?
On 0.2.9 `base_model` is a required parameter of `ServiceClient.create_sampling_client`, so the call raises `TypeError`. On 0.1.13 it defaults to `""`
and the call fails with `ValueError: Model  is not supported`.
The TrainingClient has its own `create_sampling_client(model_path)`, which knows the base model.

## Fix safety
No fix: which base model the weights belong to is not visible here.

## References
- pytrio 0.2.9: `pytrio.ServiceClient.create_sampling_client`, `pytrio.TrainingClient.create_sampling_client`
"""
    evidence = """
- (`029:client/service.py:584-588`)
- (`013:lib/service_client.py:266-271`)
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "svc = trio.ServiceClient()\n"
            "sampler = svc.create_sampling_client(base_model='Qwen/Qwen3-8B', model_path=saved.path)\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "train = trio.ServiceClient().create_lora_training_client(base_model='m')\n"
            "sampler = train.create_sampling_client(model_path=path)\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "svc = trio.ServiceClient()\n"
            "sampler = svc.create_sampling_client('Qwen/Qwen3-4B-Instruct-2507', model_path=p)\n"
        ),
        Valid("import pytrio as trio\nclient.create_sampling_client(model_path=p)\n"),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "svc = trio.ServiceClient()\n"
            "sampler = svc.create_sampling_client(model_path=saved.path)\n",
            line=3,
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def main():\n"
            "    svc = trio.ServiceClient()\n"
            "    return await svc.create_sampling_client_async(model_path='trio://x')\n",
        ),
        Invalid(
            "import pytrio as trio\n"
            "def sampler_for(svc: trio.ServiceClient, path):\n"
            "    return svc.create_sampling_client(model_path=path)\n",
            config={"target-version": "0.1"},
        ),
    )

    def visit_Call(self, node: ast.Call) -> None:
        found = self.model.client_call(node, methods=_METHODS)
        if found is None or found[0] is not Kind.SERVICE_CLIENT or found[1] not in _METHODS:
            return
        if argument(node, 0, "base_model") is None and not has_splat(node):
            self.report(node, self.message.format(method=found[1]))
