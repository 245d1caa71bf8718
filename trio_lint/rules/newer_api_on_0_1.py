"""PTR007 newer-api-on-0-1: 0.2-only methods, names and keywords used while targeting 0.1."""

from __future__ import annotations

import ast

from pytrio_facts.versions import ADDED_IN_0_2, ONE_LINE_KEYWORDS
from trio_lint.diagnostics import Severity
from trio_lint.rules.base import Invalid, Rule, Valid
from trio_lint.semantics.receivers import CLASS_KINDS, Kind

_METHODS = {
    (CLASS_KINDS[f.owner], f.name): f.replacement for f in ADDED_IN_0_2 if f.owner in CLASS_KINDS
}
_NAMES = {f.name: f.replacement for f in ADDED_IN_0_2 if f.owner == "pytrio"}
# keyword -> the calls (type name or method name) that only accept it on 0.2
_KEYWORDS: dict[str, set[str]] = {}
for _fact in ONE_LINE_KEYWORDS:
    if _fact.missing_on == "0.1":
        _KEYWORDS.setdefault(_fact.name, set()).add(_fact.owner)


class NewerApiOn01(Rule):
    code = "PTR007"
    name = "newer-api-on-0-1"
    message = "{what} does not exist on pytrio 0.1 (added in 0.2){hint}"
    severity = Severity.ERROR
    # Facts of PyTRIO's own SDK (not Tinker's): see the doc's References.
    pytrio_only = True
    max_sdk = "0.2"
    doc = """
## What it does
With `target-version = "0.1"`: flags what 0.2 added, so a script meant for a 0.1 pin does not use
it: `load_state*`, `get_server_capabilities*`, `download_checkpoint`,
`get_checkpoint_download_url`, RestClient `*_async` methods, `trio.configure`,
`trio.PyTrioError`, `trio.ImageChunk`, and the keywords `AdamParams(grad_clip_norm=)`,
`sample(return_text=)`, `save_state(ttl_seconds=, overwrite=)`,
`save_weights_for_sampler(ttl_seconds=)`, `forward_backward_custom(loss_fn_config=)`,
`access_scope=`.

## Why is this bad?
On 0.1.13 these raise `AttributeError`, `TypeError` or a Pydantic `ValidationError` (for example `AdamParams(grad_clip_norm=1.0)` is rejected by 0.1.13).

## Fix safety
No fix: the replacement needs a different approach on 0.1.

## References
- pytrio 0.2.9: `pytrio.configure`, `pytrio.PyTrioError`, `pytrio.AdamParams` (`grad_clip_norm`), `pytrio.TrainingClient.load_state`
- pytrio 0.1.13: `pytrio.AdamParams`
"""
    evidence = """
- api-diff.md §3.3 (added), row 26; TRIO004, TRIO005
"""
    VALID = (
        Valid(
            "import pytrio as trio\nadam = trio.AdamParams(learning_rate=1e-4)\n",
            config={"target-version": "0.1"},
        ),
        Valid(
            "import pytrio as trio\nadam = trio.AdamParams(learning_rate=1e-4, grad_clip_norm=1.0)\n"
        ),
        Valid(
            "import pytrio as trio\nimport torch\nmodel.load_state_dict(sd)\nopt.load_state(x)\n",
            config={"target-version": "0.1"},
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\nadam = trio.AdamParams(learning_rate=1e-4, grad_clip_norm=1.0)\n",
            config={"target-version": "0.1"},
            line=2,
            message_contains="grad_clip_norm",
        ),
        Invalid(
            "import pytrio as trio\n"
            "train = trio.ServiceClient().create_lora_training_client(base_model='m')\n"
            "train.load_state(path).result()\n",
            config={"target-version": "0.1"},
            message_contains="create_training_client_from_state",
        ),
        Invalid(
            "import pytrio as trio\n"
            "try:\n    run()\nexcept trio.PyTrioError as err:\n    print(err)\n",
            config={"target-version": "0.1"},
        ),
        Invalid(
            "import pytrio as trio\n"
            "def save(train: trio.TrainingClient):\n"
            "    return train.save_state('final', ttl_seconds=3600)\n",
            config={"target-version": "0.1"},
        ),
    )

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in _NAMES and self.model.is_sdk(node, node.attr):
            self.report(
                node,
                self.message.format(what=f"`trio.{node.attr}`", hint=f"; use {_NAMES[node.attr]}"),
            )

    def visit_Call(self, node: ast.Call) -> None:
        found = self.model.client_call(node)
        owner = None
        if found is not None:
            kind, method = found
            base = method.removesuffix("_async")
            if (kind, base) in _METHODS:
                hint = f"; use {_METHODS[(kind, base)]}"
                self.report(node, self.message.format(what=f"`{kind}.{method}`", hint=hint))
                return
            if kind is Kind.REST_CLIENT and method.endswith("_async"):
                hint = "; 0.1's RestClient is synchronous"
                self.report(node, self.message.format(what=f"`RestClient.{method}`", hint=hint))
                return
            owner = base
            if kind is Kind.REST_CLIENT:
                owner = "rest"
        elif self.model.is_sdk(node.func, "AdamParams"):
            owner = "AdamParams"
        if owner is None:
            return
        for kw in node.keywords:
            owners = _KEYWORDS.get(kw.arg or "", set())
            if owner in owners or (kw.arg == "access_scope" and owner == "rest"):
                self.report(kw, self.message.format(what=f"`{kw.arg}=`", hint="; remove it"))
