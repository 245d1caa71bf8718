"""PTR402 untrainable-base-model: a LoRA training client for a model outside the catalogue."""

from __future__ import annotations

import ast

from pytrio_facts.models import MODEL_CATALOGUE
from trio_lint.diagnostics import Severity
from trio_lint.rules._common import argument
from trio_lint.rules.base import Invalid, Rule, Valid
from trio_lint.semantics.receivers import Kind

_METHODS = ("create_lora_training_client", "create_lora_training_client_async")


class UntrainableBaseModel(Rule):
    code = "PTR402"
    name = "untrainable-base-model"
    message = (
        "{model!r} is not a trainable base model ({known}): check `svc.get_supported_models()`, "
        "or list it under `trainable-models` in [tool.trio-lint]"
    )
    severity = Severity.WARNING
    # The catalogue is PyTRIO's; Tinker serves other models.
    pytrio_only = True
    doc = f"""
## What it does
Flags `create_lora_training_client(base_model=...)` with a string literal (or a module constant
holding one) that is not in the trainable model list: the `trainable-models` configuration key,
by default {", ".join(f"`{m}`" for m in MODEL_CATALOGUE)} (`pytrio_facts.models.MODEL_CATALOGUE`).

## Why is this bad?
The service trains only the models of its catalogue; a base (non-Instruct) checkpoint such as
`Qwen/Qwen3-4B` or a Hugging Face id copied from a transformers script is rejected when the
training run is created, after the script has already loaded data and tokenizers. The catalogue
is the server's (`029:transport/control/model/list.py:15-30`): read it with
`get_supported_models()` or `get_server_capabilities().supported_models[i].training.available`
(`029:types/server_capabilities.py:29-49`), and keep `trainable-models` in step with it.

## Example
```python
train = svc.create_lora_training_client(base_model="Qwen/Qwen3-4B")
```

Use instead:
```python
train = svc.create_lora_training_client(base_model="{MODEL_CATALOGUE[0]}")
```

## Options
- `trainable-models`: the ids this rule accepts (default: the SDK facts' catalogue).

PyTRIO-only: with `sdk-modules = ["tinker"]`, Tinker code is not checked (other catalogue).

## Fix safety
No fix: the model is the author's choice.

## References
- api-diff.md row 10, pitfall 15; the skill's model catalogue
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            f"train = trio.ServiceClient().create_lora_training_client(base_model={MODEL_CATALOGUE[0]!r})\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "svc = trio.ServiceClient()\n"
            "train = svc.create_lora_training_client(base_model='my-org/custom-7b')\n",
            config={"trainable-models": ["my-org/custom-7b"]},
        ),
        Valid(
            "import pytrio as trio\nfrom transformers import AutoModelForCausalLM\n"
            "model = AutoModelForCausalLM.from_pretrained('Qwen/Qwen3-4B')\n"
            "sampler = trio.ServiceClient().create_sampling_client(base_model='Qwen/Qwen3-4B')\n"
        ),
        Valid(
            "import os\nimport pytrio as trio\n"
            "svc = trio.ServiceClient()\n"
            "train = svc.create_lora_training_client(base_model=os.environ['BASE_MODEL'])\n"
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "svc = trio.ServiceClient()\n"
            "train = svc.create_lora_training_client(base_model='Qwen/Qwen3-4B', rank=16)\n",
            line=3,
            message_contains="Qwen/Qwen3-4B",
        ),
        Invalid(
            "import pytrio as trio\n"
            "BASE_MODEL = 'meta-llama/Llama-3.1-8B'\n"
            "def make(svc: trio.ServiceClient):\n"
            "    return svc.create_lora_training_client(BASE_MODEL)\n",
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def main(svc: trio.ServiceClient):\n"
            f"    return await svc.create_lora_training_client_async(base_model={MODEL_CATALOGUE[0]!r})\n",
            config={"trainable-models": ["my-org/custom-7b"]},
        ),
    )

    def visit_Call(self, node: ast.Call) -> None:
        found = self.ctx.receivers.client_call(node)
        if found is None or found[0] is not Kind.SERVICE_CLIENT or found[1] not in _METHODS:
            return
        expr = argument(node, 0, "base_model")
        if isinstance(expr, ast.Name):
            expr = self.ctx.receivers.bound_expression(expr)
        if not (isinstance(expr, ast.Constant) and isinstance(expr.value, str)):
            return
        known = tuple(self.ctx.config.trainable_models) or MODEL_CATALOGUE
        if expr.value not in known:
            target = argument(node, 0, "base_model") or node
            self.report(target, self.message.format(model=expr.value, known=", ".join(known)))
