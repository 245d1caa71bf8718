"""PTR003 removed-rest-method: RestClient and APIFuture methods that 0.2 removed."""

from __future__ import annotations

import ast

from pytrio_facts.migration import REMOVED_ATTRIBUTES
from pytrio_facts.versions import REMOVED_METHODS
from trio_lint.diagnostics import Severity
from trio_lint.rules.base import Invalid, Rule, Valid
from trio_lint.semantics.receivers import Kind

_REPLACEMENTS = {fact.name: fact.replacement for fact in REMOVED_METHODS}
_REMOVED_FUTURE_METHODS = REMOVED_ATTRIBUTES["APIFuture"]


class RemovedRestMethod(Rule):
    code = "PTR003"
    name = "removed-rest-method"
    message = "`{owner}.{method}` was removed in pytrio 0.2: use {replacement}"
    severity = Severity.ERROR
    # Facts of PyTRIO's own SDK (not Tinker's): see the doc's References.
    pytrio_only = True
    min_sdk = "0.2"
    doc = """
## What it does
Flags calls of methods that pytrio 0.1.13 had and 0.2.9 removed: `RestClient.list_weights`,
`get_archive_url`, `get_user_info`, `get_checkpoint_info`, and `APIFuture.map_model` /
`map_dict`. Part of the 0.1 -> 0.2 migration guide (`--target-version 0.2`).

## Why is this bad?
They raise `AttributeError` on 0.2. The 0.2 RestClient lists checkpoints with
`list_user_checkpoints()` / `list_checkpoints(run_id)` and hands out archives with
`get_checkpoint_archive_url(checkpoint_id)`, all returning
`concurrent.futures.Future`s.

## Fix safety
No fix: the ids and the shapes of the results differ between the lines.

## References
- pytrio 0.2.9: `pytrio.RestClient.list_user_checkpoints`, `pytrio.RestClient.get_checkpoint_archive_url`
- pytrio 0.1.13: `pytrio.RestClient.list_weights`, `pytrio.RestClient.get_archive_url`
"""
    evidence = """
- api-diff.md rows 44, 48; §3.3; TRIO005
- (`029:client/rest.py:293-307`)
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "rest = trio.ServiceClient().create_rest_client()\n"
            "ckpts = rest.list_user_checkpoints().result().checkpoints\n"
        ),
        Valid("import pytrio as trio\nfrom safetensors import safe_open\nlayer.list_weights()\n"),
        Valid(
            "import pytrio as trio\n"
            "rest = trio.ServiceClient().create_rest_client()\n"
            "weights = rest.list_weights()\n",
            config={"target-version": "0.1"},
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "rest = trio.ServiceClient().create_rest_client()\n"
            "weights = rest.list_weights(page=1, page_size=50)\n",
            line=3,
            message_contains="list_user_checkpoints",
        ),
        Invalid(
            "import pytrio as trio\n"
            "def archive(rest: trio.RestClient, weight_id):\n"
            "    return rest.get_archive_url(weight_id)['url']\n",
        ),
        Invalid(
            "import pytrio as trio\n"
            "train = trio.ServiceClient().create_lora_training_client(base_model='m')\n"
            "loss = train.forward_backward(batch).map_dict(lambda d: d['loss'])\n",
            message_contains="map(",
        ),
    )

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if not isinstance(func, ast.Attribute):
            return
        typ = self.model.type_of(func.value)
        if typ is None:
            return
        if typ.kind is Kind.REST_CLIENT and func.attr in _REPLACEMENTS:
            self.report(
                node,
                self.message.format(
                    owner="RestClient", method=func.attr, replacement=_REPLACEMENTS[func.attr]
                ),
            )
        elif typ.kind is Kind.API_FUTURE and func.attr in _REMOVED_FUTURE_METHODS:
            self.report(
                node,
                self.message.format(
                    owner="APIFuture", method=func.attr, replacement="`future.map(fn)`"
                ),
            )
