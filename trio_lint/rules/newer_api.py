"""PTR007 newer-api: a pytrio name, method, attribute or keyword added after the target release."""

from __future__ import annotations

import ast

from pytrio_facts.versions import ADDED_IN_0_2
from trio_lint.output.diagnostics import Severity
from trio_lint.rules.base import Invalid, Valid
from trio_lint.rules.checkers import conformance

# Advice only (what a 0.1 pin offers instead); whether a name exists comes from the API data.
_ADVICE = {f.name: f"use {f.replacement}" for f in ADDED_IN_0_2}


class NewerApi(conformance.ConformanceRule):
    code = "PTR007"
    name = "newer-api"
    # Its name until the API data replaced the hand-kept lists; still selects and ignores it.
    former_names = ("newer-api-on-0-1",)
    message = "{what}{advice}"
    severity = Severity.ERROR
    # Facts of PyTRIO's own SDK (not Tinker's): see the doc's References.
    pytrio_only = True
    doc = """
## What it does
Flags a name, method, attribute or keyword of pytrio that the target release (`target-version`,
by default the installed pytrio) does not have yet, and names the release that added it: with
`target-version = "0.1"` everything 0.2 added (`load_state*`, `get_server_capabilities*`,
`trio.configure`, `trio.PyTrioError`, `AdamParams(grad_clip_norm=)`, `save_state(ttl_seconds=)`,
the RestClient `*_async` methods, ...); with `target-version = "0.2.8"` the 0.2.9 `configure`
option names (`request_timeout_seconds=`, ...) and `pytrio.types.CheckpointDownloadSource`.

## Why is this bad?
Code meant to run on a pinned older release raises `AttributeError`, `ImportError`, `TypeError`
or a Pydantic `ValidationError` there; on pytrio 0.2.9 `configure` only warns about an unknown
option, so a 0.2.9 option name on an older pin is a `TypeError`.

## Fix safety
No fix: the older release needs a different approach.

## References
- pytrio 0.2.9: `pytrio.configure`, `pytrio.PyTrioError`, `pytrio.AdamParams` (`grad_clip_norm`), `pytrio.TrainingClient.load_state`
- pytrio 0.1.13: `pytrio.AdamParams`
"""
    evidence = """
- Added in 0.2: `load_state*` (`029:client/training.py:848,862,879,893`),
  `get_server_capabilities*` (`029:client/service.py:202,210`), `configure`
  (`029:config/config.py:562`), `PyTrioError` (`029:errors/base.py:8`, `029:__init__.py:6-7`),
  `AdamParams.grad_clip_norm` (`029:types/optim_step/adam_params.py:33`),
  `save_state(ttl_seconds=, overwrite=)` (`029:client/training.py:694-696`), the RestClient
  `*_async` methods (`029:client/rest.py:212`). 0.1.13 has none of them: `AdamParams`
  (`013:types/optim_step/adam_params.py:4-18`), `save_state(self, name)`
  (`013:lib/training_client.py:381`), a RestClient without `async def` (`013:lib/rest_client.py`),
  a `pytrio` without `configure`/`PyTrioError` (`013:__init__.py:1-27`).
- 0.1 types forbid unknown fields, so a 0.2 field is a pydantic ValidationError there
  (`013:types/base.py:5-9`).
- 0.2.8 `configure` is keyword-only with the old option names and no catch-all, so a 0.2.9 name
  is a TypeError (`028:config/config.py:553-583`); 0.2.9 renames them
  (`029:config/config.py:566`) and warns about unknown options (`029:config/config.py:593`,
  `029:config/config.py:633-638`).
- `pytrio.types.CheckpointDownloadSource`: a model exported by 0.2.9 (`029:types/__init__.py:26`,
  `029:types/rest.py:114`); 0.2.8 has only a private `Literal` of that name
  (`028:types/rest.py:24`), not exported.
- Additions per release: generated `pytrio_facts/api_versions.json`.
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
        Valid(
            "import pytrio as trio\ntrio.configure(timeout=600)\n",
            config={"target-version": "0.2.8"},
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
        Invalid(
            "import pytrio as trio\ntrio.configure(request_timeout_seconds=600)\n",
            config={"target-version": "0.2.8"},
            message_contains="added in pytrio 0.2.9",
        ),
    )

    @classmethod
    def report_issue(
        cls, checker: conformance.ConformanceChecker, issue: conformance.Issue, node: ast.AST
    ) -> None:
        base = issue.name.removesuffix("_async")
        advice = _ADVICE.get(base) if issue.target.startswith("0.1") else None
        if advice is None and issue.target.startswith("0.1") and issue.owner == "RestClient":
            advice = "0.1's RestClient is synchronous" if issue.name.endswith("_async") else None
        checker.report(
            issue.node,
            cls.message.format(
                what=conformance.describe(issue), advice=f"; {advice}" if advice else ""
            ),
            code=cls.code,
        )
