"""PTR302 hf-label-keys: Hugging Face label keys in `loss_fn_inputs` instead of `target_tokens`."""

from __future__ import annotations

import ast

from trio_lint.output.diagnostics import Severity
from trio_lint.rules._common import argument
from trio_lint.rules.base import Invalid, LooksAt, Rule, Valid

_HF_KEYS = ("labels", "target_ids", "targets", "input_ids", "label_ids")


class HfLabelKeys(Rule):
    code = "PTR302"
    name = "hf-label-keys"
    looks_at = LooksAt(sdk_calls=frozenset({"Datum"}))
    message = (
        "`loss_fn_inputs` has {key!r} but no 'target_tokens': PyTRIO reads only 'target_tokens' "
        "(the next token at each input position)"
    )
    severity = Severity.ERROR
    doc = """
## What it does
Flags a dict literal passed as a `Datum`'s `loss_fn_inputs` that has no `"target_tokens"` key but
has a Hugging Face-style key: `"labels"`, `"target_ids"`, `"targets"`, `"input_ids"`,
`"label_ids"`.

## Why is this bad?
`Datum` accepts any key, so the mistake passes construction and fails at `forward_backward` time
with `ValueError: target_tokens is required` on both 0.1.13 and 0.2.9.

## Fix safety
No fix: Hugging Face `labels` are unshifted and usually hold `-100`; a plain rename would train on
the wrong alignment.

## References
- pytrio 0.2.9: `pytrio.Datum`, `pytrio.TrainingClient.forward_backward`
"""
    evidence = """
- `Datum.loss_fn_inputs` takes any key (`029:types/forward/datum.py:21-42`,
  `013:types/forward/datum.py:14-34`).
- `target_tokens` is required by every loss and checked when the batch is planned, before
  sending (`029:client/training_batch.py:27-49,143-146`, `029:client/training.py:613-619`);
  0.1.13 checks it in `Datum.get_data`, called for each datum before sending
  (`013:types/forward/datum.py:47-49,68-70`, `013:lib/training_client.py:57`).
- HuggingFace `labels` are unshifted (the model shifts them) and use -100 for ignored positions:
  https://huggingface.co/docs/transformers/glossary#labels,
  https://pytorch.org/docs/stable/generated/torch.nn.CrossEntropyLoss.html (`ignore_index`).
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "d = trio.Datum(model_input=mi, loss_fn_inputs={'target_tokens': t, 'weights': w})\n"
        ),
        Valid(
            "import pytrio as trio\nbatch = {'input_ids': ids, 'labels': ids}\nout = model(**batch)\n"
        ),
        Valid("import pytrio as trio\nd = trio.Datum(model_input=mi, loss_fn_inputs=inputs)\n"),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "d = trio.Datum(model_input=mi, loss_fn_inputs={'labels': ids})\n",
            line=2,
            message_contains="'labels'",
        ),
        Invalid(
            "import pytrio as trio\n"
            "d = trio.Datum(mi, {'input_ids': ids[:-1], 'target_ids': ids[1:]})\n",
        ),
        Invalid(
            "from pytrio.types import Datum\n"
            "d = Datum(model_input=mi, loss_fn_inputs={'targets': t, 'weights': w})\n",
        ),
    )

    def visit_Call(self, node: ast.Call) -> None:
        if not self.model.is_sdk(node.func, "Datum"):
            return
        inputs = argument(node, 1, "loss_fn_inputs")
        if inputs is None:
            return
        if isinstance(inputs, ast.Dict):
            if None in inputs.keys:
                return
            keys = [k.value for k in inputs.keys if isinstance(k, ast.Constant)]
        else:
            # A dict built elsewhere (a name, `self.x`, a helper's return, `CONFIG["k"]`).
            entries = self.model.dict_entries(inputs)
            if not entries:
                return
            keys = list(entries)
        if "target_tokens" in keys:
            return
        hf = next((k for k in keys if k in _HF_KEYS), None)
        if hf is not None:
            self.report(inputs, self.message.format(key=hf))
