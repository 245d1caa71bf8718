"""PTR005 changed-signature: calls shaped for a 0.1 signature that 0.2 changed."""

from __future__ import annotations

import ast

import libcst as cst

from trio_lint.diagnostics import Applicability, Severity
from trio_lint.rules._common import drop_positional
from trio_lint.rules.base import Invalid, Rule, Valid, edit, safe_fix
from trio_lint.semantics.receivers import Kind

_SAVE_AND_SAMPLE = (
    "save_weights_and_get_sampling_client",
    "save_weights_and_get_sampling_client_async",
)
_ARCHIVE = ("get_checkpoint_archive_url", "get_checkpoint_archive_url_async")


class ChangedSignature(Rule):
    code = "PTR005"
    name = "changed-signature"
    message = "{what}"
    severity = Severity.ERROR
    # Facts of PyTRIO's own SDK (not Tinker's): see the doc's References.
    pytrio_only = True
    min_sdk = "0.2"
    fix_safety = Applicability.SAFE
    doc = """
## What it does
Flags calls written for a 0.1 signature that 0.2 changed:
- `rest.get_checkpoint_archive_url(training_run_id, checkpoint_id)`: 0.2 takes only the
  checkpoint id;
- `train.save_weights_and_get_sampling_client(name)`: 0.2 takes no arguments.

## Why is this bad?
Both raise `TypeError` on 0.2. The 0.2 `save_weights_and_get_sampling_client()` saves *temporary* weights with a
6 h TTL; for a named, lasting checkpoint save it yourself.

## Fix safety
Dropping the run id from `get_checkpoint_archive_url` is safe: 0.2 keys archives by checkpoint id
only. The sampling-client form has no fix (a named save and a temporary one differ).

## References
- pytrio 0.2.9: `pytrio.RestClient.get_checkpoint_archive_url`, `pytrio.TrainingClient.save_weights_and_get_sampling_client`
"""
    evidence = """
- api-diff.md row 48; §3.3 (changed); TRIO005
- (`029:client/rest.py:293-307`; `029:client/training.py:71-73, 1092-1101`)
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "rest = trio.ServiceClient().create_rest_client()\n"
            "url = rest.get_checkpoint_archive_url(ckpt_id).result().url\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "train = trio.ServiceClient().create_lora_training_client(base_model='m')\n"
            "sampler = train.save_weights_and_get_sampling_client()\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "rest = trio.ServiceClient().create_rest_client()\n"
            "url = rest.get_checkpoint_archive_url(run_id, ckpt_id)\n",
            config={"target-version": "0.1"},
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "rest = trio.ServiceClient().create_rest_client()\n"
            "url = rest.get_checkpoint_archive_url(run_id, ckpt_id).result().url\n",
            fixed="import pytrio as trio\n"
            "rest = trio.ServiceClient().create_rest_client()\n"
            "url = rest.get_checkpoint_archive_url(ckpt_id).result().url\n",
            line=3,
        ),
        Invalid(
            "import pytrio as trio\n"
            "train = trio.ServiceClient().create_lora_training_client(base_model='m')\n"
            "sampler = train.save_weights_and_get_sampling_client('final')\n",
            fixed=None,
            message_contains="save_weights_for_sampler",
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def main(train: trio.TrainingClient):\n"
            "    return await train.save_weights_and_get_sampling_client_async(name='step-1')\n",
            fixed=None,
        ),
    )

    def visit_Call(self, node: ast.Call) -> None:
        found = self.model.client_call(node)
        if found is None:
            return
        kind, method = found
        if kind is Kind.REST_CLIENT and method in _ARCHIVE and len(node.args) == 2:
            self.report(
                node,
                self.message.format(
                    what=f"`{method}` takes only the checkpoint id on 0.2; drop the run id"
                ),
                fix=safe_fix("Drop the run id", edit(node, cst.Call, drop_positional(0))),
            )
        elif (
            kind is Kind.TRAINING_CLIENT
            and method in _SAVE_AND_SAMPLE
            and (node.args or node.keywords)
        ):
            self.report(
                node,
                self.message.format(
                    what=f"`{method}` takes no arguments on 0.2 (it saves temporary weights "
                    "with a 6 h TTL); for a named save use "
                    "`train.create_sampling_client(model_path="
                    "train.save_weights_for_sampler(name).result().path)`"
                ),
            )
