"""PTR003 removed-api: a pytrio method, attribute or name that the target release no longer has."""

from __future__ import annotations

import ast

from pytrio_facts.migration import REMOVED_ATTRIBUTES
from pytrio_facts.versions import REMOVED_METHODS
from trio_lint.output.diagnostics import Severity
from trio_lint.rules.base import Invalid, Valid
from trio_lint.rules.checkers import conformance

# Advice only (what to write instead); whether a name exists comes from the API data.
_ADVICE = {fact.name: f"use {fact.replacement}" for fact in REMOVED_METHODS} | dict.fromkeys(
    REMOVED_ATTRIBUTES["APIFuture"], "use `future.map(fn)`"
)


class RemovedApi(conformance.ConformanceRule):
    code = "PTR003"
    name = "removed-api"
    # Its name until the API data replaced the hand-kept lists; still selects and ignores it.
    former_names = ("removed-rest-method",)
    message = "{what}: {consequence}{advice}"
    severity = Severity.ERROR
    # Facts of PyTRIO's own SDK (not Tinker's): see the doc's References.
    pytrio_only = True
    doc = """
## What it does
Flags a method, attribute or name of a PyTRIO object (a client, a future, the `pytrio` or
`pytrio.types` module) that an earlier pytrio release had and the target release
(`target-version`, by default the installed pytrio) no longer has, and names the release that
removed it: the 0.1 RestClient's `list_weights` / `get_archive_url` / `get_user_info` /
`get_checkpoint_info`, `APIFuture.map_model` / `map_dict`, `pytrio.types.BatchParams`, and every
later removal. The knowledge comes from the API of each released pytrio, read from its wheel.

## Why is this bad?
The call or read raises `AttributeError` (an import, `ImportError`) on the target release. The
0.2 RestClient lists checkpoints with `list_user_checkpoints()` / `list_checkpoints(run_id)` and
hands out archives with `get_checkpoint_archive_url(checkpoint_id)`, all returning
`concurrent.futures.Future`s. Fields removed from result objects are PTR006's, keywords PTR004's.

## Fix safety
No fix: the replacements take other arguments and return other shapes.

## References
- pytrio 0.2.9: `pytrio.RestClient.list_user_checkpoints`, `pytrio.RestClient.get_checkpoint_archive_url`, `pytrio.types.APIFuture.map`
- pytrio 0.1.13: `pytrio.RestClient.list_weights`, `pytrio.RestClient.get_archive_url`
"""
    evidence = """
- 0.1.13 RestClient: `get_user_info`, `list_weights`, `get_archive_url`, `get_checkpoint_info`
  (`013:lib/rest_client.py:11-44`, `013:lib/rest_client.py:181`); 0.2.0's RestClient has none
  of them, only `list_checkpoints`, `list_user_checkpoints`, `get_checkpoint_archive_url`
  (`020:client/rest.py:114-175`).
- 0.2.9's replacements return `concurrent.futures.Future`s (`029:client/rest.py:6`,
  `029:client/rest.py:199-211,252-268,293-306`).
- `APIFuture.map_model`/`map_dict`: `013:types/future/api_future.py:48-54`, still in
  `020:types/future/api_future.py:56-62`, gone by 0.2.4 (`024:types/future/api_future.py:83`
  has `map` alone); 0.2.9 keeps `map` (`029:types/future/api_future.py:84`).
- `pytrio.types.BatchParams`: `013:types/__init__.py:7`; not exported by 0.2.0
  (`020:types/__init__.py`).
- `pytrio.types.CheckpointDownloadUrlResponse`: `028:types/__init__.py:27`; not exported by
  0.2.9 (`029:types/__init__.py:1-43`).
- The release that removed each name: generated `pytrio_facts/api_versions.json`.
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
        Valid(
            "from pytrio.types import CheckpointDownloadUrlResponse\n",
            config={"target-version": "0.2.8"},
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "rest = trio.ServiceClient().create_rest_client()\n"
            "weights = rest.list_weights(page=1, page_size=50)\n",
            line=3,
            message_contains="removed in pytrio 0.2.0",
        ),
        Invalid(
            "import pytrio as trio\n"
            "def archive(rest: trio.RestClient, weight_id):\n"
            "    return rest.get_archive_url(weight_id)['url']\n",
            message_contains="get_checkpoint_archive_url",
        ),
        Invalid(
            "import pytrio as trio\n"
            "train = trio.ServiceClient().create_lora_training_client(base_model='m')\n"
            "loss = train.forward_backward(batch).map_dict(lambda d: d['loss'])\n",
            message_contains="map(",
        ),
        Invalid(
            "from pytrio.types import CheckpointDownloadUrlResponse\n",
            message_contains="removed in pytrio 0.2.9 (last in 0.2.8)",
        ),
        Invalid(
            "import pytrio as trio\nparams = trio.types.BatchParams(batch_size=8)\n",
            config={"target-version": "0.2"},
        ),
    )

    @classmethod
    def report_issue(
        cls, checker: conformance.ConformanceChecker, issue: conformance.Issue, node: ast.AST
    ) -> None:
        advice = _ADVICE.get(issue.name)
        checker.report(
            issue.node,
            cls.message.format(
                what=conformance.describe(issue),
                consequence=conformance.consequence(issue),
                advice=f"; {advice}" if advice else "",
            ),
            code=cls.code,
        )
