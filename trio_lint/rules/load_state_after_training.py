"""PTR403 load-state-after-training: `load_state` on a TrainingClient that already trained."""

from __future__ import annotations

import ast

from trio_lint.output.diagnostics import Severity
from trio_lint.rules._common import source_text
from trio_lint.rules.base import Invalid, LooksAt, Rule, Valid
from trio_lint.semantics.receivers import Kind

_STATEFUL = frozenset(
    name
    for base in (
        "forward",
        "forward_backward",
        "forward_backward_custom",
        "optim_step",
        "save_state",
        "save_weights_for_sampler",
    )
    for name in (base, f"{base}_async")
)
_LOADS = frozenset(
    {
        "load_state",
        "load_state_async",
        "load_state_with_optimizer",
        "load_state_with_optimizer_async",
    }
)


class LoadStateAfterTraining(Rule):
    code = "PTR403"
    looks_at = LooksAt(calls=_STATEFUL | _LOADS)
    name = "load-state-after-training"
    message = (
        "`{recv}.{method}` after `{recv}.{first}`: 0.2 loads state only into a fresh client; "
        "create one with `svc.create_training_client_from_state{opt}(path)`"
    )
    severity = Severity.ERROR
    # Facts of PyTRIO's own SDK (not Tinker's): see the doc's References.
    pytrio_only = True
    min_sdk = "0.2"
    doc = """
## What it does
Flags `R.load_state(...)` / `load_state_with_optimizer(...)` (or their `_async` twins) after a
forward, forward-backward, optimizer step or save on the same TrainingClient `R` in the same
function.

## Why is this bad?
pytrio 0.2.9 initialises the trainer lazily on the first stateful call; afterwards `load_state`
raises `ValidationError` with code `validation.already_initialized`. Restoring mid-run needs a new client built from the
checkpoint.

## Fix safety
No fix: a new client replaces the old one.

## References
- pytrio 0.2.9: `pytrio.TrainingClient.load_state`, `pytrio.ServiceClient.create_training_client_from_state`
"""
    evidence = """
- (`029:client/training.py:848-931`)
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "train = trio.ServiceClient().create_lora_training_client(base_model='m')\n"
            "train.load_state(path).result()\n"
            "train.forward_backward(batch).result()\n"
        ),
        Valid("import pytrio as trio\nimport torch\nmodel.forward(x)\nmodel.load_state_dict(sd)\n"),
        Valid(
            "import pytrio as trio\n"
            "train = trio.ServiceClient().create_lora_training_client(base_model='m')\n"
            "train.forward_backward(batch).result()\n"
            "other = trio.ServiceClient().create_lora_training_client(base_model='m')\n"
            "other.load_state(path).result()\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "def f(train: trio.TrainingClient, batch, path):\n"
            "    train.forward_backward(batch).result()\n"
            "    train.load_state(path)\n",
            config={"target-version": "0.1"},
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "train = trio.ServiceClient().create_lora_training_client(base_model='m')\n"
            "train.forward_backward(batch).result()\n"
            "train.load_state(best).result()\n",
            line=4,
        ),
        Invalid(
            "import pytrio as trio\n"
            "def resume(train: trio.TrainingClient, adam, path):\n"
            "    train.optim_step(adam).result()\n"
            "    return train.load_state_with_optimizer(path)\n",
            message_contains="create_training_client_from_state_with_optimizer",
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def resume(train: trio.TrainingClient, path):\n"
            "    await (await train.save_state_async('before'))\n"
            "    await train.load_state_async(path)\n",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._trained: list[dict[str, str]] = [{}]

    def visit_FunctionDef(self, node: ast.AST) -> None:
        self._trained.append({})

    visit_AsyncFunctionDef = visit_FunctionDef

    def leave_FunctionDef(self, node: ast.AST) -> None:
        self._trained.pop()

    leave_AsyncFunctionDef = leave_FunctionDef

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if not isinstance(func, ast.Attribute):
            return
        if func.attr not in _STATEFUL and func.attr not in _LOADS:
            return
        typ = self.model.type_of(func.value)
        if typ is None or typ.kind is not Kind.TRAINING_CLIENT:
            return
        recv = source_text(func.value)
        trained = self._trained[-1]
        if func.attr in _STATEFUL:
            trained.setdefault(recv, func.attr)
        elif recv in trained:
            opt = "_with_optimizer" if "with_optimizer" in func.attr else ""
            self.report(
                node,
                self.message.format(recv=recv, method=func.attr, first=trained[recv], opt=opt),
            )
