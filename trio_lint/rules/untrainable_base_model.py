"""PTR402 untrainable-base-model: a LoRA training client for a model outside the configured
`trainable-models` list (silent without one: the catalogue is the server's)."""

from __future__ import annotations

import ast

from trio_lint.output.diagnostics import Severity
from trio_lint.rules._common import argument
from trio_lint.rules.base import Invalid, LooksAt, Rule, Valid, limited
from trio_lint.semantics.receivers import Kind

_MODELS = {"trainable-models": ["Qwen/Qwen3-4B-Instruct-2507", "Qwen/Qwen3-8B"]}
_METHODS = ("create_lora_training_client", "create_lora_training_client_async")


class UntrainableBaseModel(Rule):
    code = "PTR402"
    looks_at = LooksAt(calls=frozenset(_METHODS))
    name = "untrainable-base-model"
    message = (
        "{model!r} is not in your `trainable-models` list ({known}): check "
        "`svc.get_server_capabilities()` and update the list or the model"
    )
    severity = Severity.WARNING
    # The catalogue is PyTRIO's; Tinker serves other models.
    pytrio_only = True
    doc = """
## What it does
Flags a `create_lora_training_client(base_model=...)` model id (a string literal or a module
constant holding one) that is not in your `trainable-models` list in `[tool.trio-lint]`. Without
that list the rule reports nothing: which models a service trains is the server's catalogue, not
something a linter can know.

## Why is this bad?
The service trains only the models of its catalogue; a base model outside it, such as a Hugging
Face id copied from a transformers script, is rejected when the training run is created, after the
script has already loaded data and tokenizers. Read the catalogue with
`svc.get_server_capabilities()` (each `supported_models[i].training.available`) and keep
`trainable-models` in step with the service you train on.

## Options
- `trainable-models`: the model ids your service trains (default: none, and the rule is silent).

PyTRIO-only: with `sdk-modules = ["tinker"]`, Tinker code is not checked.

## Fix safety
No fix: the model is the author's choice.

## References
- pytrio 0.2.9: `pytrio.ServiceClient.get_server_capabilities`, `pytrio.types.SupportedModel`
"""
    evidence = """
- (`029:transport/control/model/list.py:15-30`)
- (`029:types/server_capabilities.py:29-49`)
- Measured on public code: the default five-model list flagged `Qwen/Qwen3.5-4B`, the model of
  the SDK's own README (4 of 4 findings false), so the rule only checks a configured list.
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "svc = trio.ServiceClient()\n"
            "train = svc.create_lora_training_client(base_model='Qwen/Qwen3-4B-Instruct-2507', rank=16)\n",
            config=_MODELS,
        ),
        Valid(
            "import pytrio as trio\n"
            "svc = trio.ServiceClient()\n"
            "train = svc.create_lora_training_client(base_model='Qwen/Qwen3.5-4B', rank=32)\n"
        ),
        Valid(
            "import pytrio as trio\nfrom transformers import AutoModelForCausalLM\n"
            "model = AutoModelForCausalLM.from_pretrained('Qwen/Qwen3-4B')\n"
            "sampler = trio.ServiceClient().create_sampling_client(base_model='Qwen/Qwen3-4B')\n",
            config=_MODELS,
        ),
        Valid(
            "import os\nimport pytrio as trio\n"
            "svc = trio.ServiceClient()\n"
            "train = svc.create_lora_training_client(base_model=os.environ['BASE_MODEL'])\n",
            config=_MODELS,
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "svc = trio.ServiceClient()\n"
            "train = svc.create_lora_training_client(base_model='Qwen/Qwen3-4B', rank=16)\n",
            line=3,
            message_contains="Qwen/Qwen3-4B",
            config=_MODELS,
        ),
        Invalid(
            "import pytrio as trio\n"
            "BASE_MODEL = 'meta-llama/Llama-3.1-8B'\n"
            "def make(svc: trio.ServiceClient):\n"
            "    return svc.create_lora_training_client(BASE_MODEL)\n",
            config=_MODELS,
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def main(svc: trio.ServiceClient):\n"
            "    return await svc.create_lora_training_client_async(base_model='Qwen/Qwen3-8B')\n",
            config={"trainable-models": ["my-org/custom-7b"]},
        ),
    )
    reach = limited(
        "queue-worker",
    )

    def visit_Call(self, node: ast.Call) -> None:
        if not self.ctx.config.trainable_models:
            return
        found = self.model.client_call(node, methods=_METHODS)
        if found is None or found[0] is not Kind.SERVICE_CLIENT or found[1] not in _METHODS:
            return
        expr = self.model.literal(argument(node, 0, "base_model"))
        if not (isinstance(expr, ast.Constant) and isinstance(expr.value, str)):
            return
        known = tuple(self.ctx.config.trainable_models)
        if known and expr.value not in known:
            target = argument(node, 0, "base_model") or node
            self.report(target, self.message.format(model=expr.value, known=", ".join(known)))
