"""PTR005 changed-signature: more positional arguments than the target release's signature takes."""

from __future__ import annotations

import ast

from trio_lint.output.diagnostics import Applicability, Severity
from trio_lint.rules._common import drop_positional, walk
from trio_lint.rules.base import Fix, Invalid, Valid, edit, safe_fix
from trio_lint.rules.checkers import conformance

# Reviewed by hand: 0.1's (training_run_id, checkpoint_id) became (checkpoint_id) in 0.2.0, which
# keys archives by checkpoint id only, so dropping the first argument keeps the meaning.
_DROP_FIRST = (
    "RestClient.get_checkpoint_archive_url",
    "RestClient.get_checkpoint_archive_url_async",
)
_ADVICE = {
    "TrainingClient.save_weights_and_get_sampling_client": (
        "it saves temporary weights with a 6 h TTL; for a named save use "
        "`train.create_sampling_client(model_path=train.save_weights_for_sampler(name).result().path)`"
    ),
}


class ChangedSignature(conformance.ConformanceRule):
    code = "PTR005"
    name = "changed-signature"
    message = "`{owner}` takes {allowed} on pytrio {target} ({given} given){earlier}{advice}"
    severity = Severity.ERROR
    # Facts of PyTRIO's own SDK (not Tinker's): see the doc's References.
    pytrio_only = True
    fix_safety = Applicability.SAFE
    doc = """
## What it does
Flags a call of a pytrio function, method or type with more positional arguments than the target
release (`target-version`, by default the installed pytrio) accepts, and names the last release
whose signature took them: `rest.get_checkpoint_archive_url(training_run_id, checkpoint_id)` and
`train.save_weights_and_get_sampling_client(name)` are 0.1 signatures; `trio.configure(...)` and
the types (`trio.Datum(...)`, `trio.SamplingParams(...)`) take keywords only.

## Why is this bad?
The call raises `TypeError` on the target release. The 0.2 `save_weights_and_get_sampling_client()`
takes no name: it saves *temporary* weights with a 6 h TTL; for a named, lasting checkpoint save
it yourself.

A call inside `try:` whose `except TypeError:` handler calls the same function with the target
release's arguments (a shim for several releases) is not reported.

## Fix safety
Dropping the run id from `get_checkpoint_archive_url` is safe: 0.2 keys archives by checkpoint id
only. Other calls have no fix.

## References
- pytrio 0.2.9: `pytrio.RestClient.get_checkpoint_archive_url`, `pytrio.TrainingClient.save_weights_and_get_sampling_client`
- pytrio 0.1.13: `pytrio.RestClient.get_checkpoint_archive_url`
"""
    evidence = """
- `get_checkpoint_archive_url(training_run_id, checkpoint_id)` on 0.1.13
  (`013:lib/rest_client.py:89-91`), `(checkpoint_id)` on 0.2.9 (`029:client/rest.py:293-306`).
- `save_weights_and_get_sampling_client(name)` on 0.1.13 (`013:lib/training_client.py:503-505`,
  `013:lib/training_client.py:520`); no parameter on 0.2.9 (`029:client/training.py:1084`,
  `029:client/training.py:1103`), which saves under a generated name with a 6 h TTL, temporary
  visibility (`029:client/training.py:72-73,1092-1101`).
- `configure` is keyword-only (`029:config/config.py:562-563`); the types are pydantic models
  (`029:types/base.py:9`), whose `__init__(self, /, **data)` takes no positional argument
  (pydantic 2: `pydantic.BaseModel.__init__`,
  https://docs.pydantic.dev/latest/api/base_model/#pydantic.BaseModel.__init__).
- Each release's signatures: generated `pytrio_facts/api_versions.json`.
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
        Valid(
            "import pytrio as trio\n"
            "def archive_url(rest: trio.RestClient, run_id, checkpoint_id):\n"
            "    try:\n"
            "        return rest.get_checkpoint_archive_url(run_id, checkpoint_id).result()\n"
            "    except TypeError:  # pytrio >= 0.2 keys archives by checkpoint id only\n"
            "        return rest.get_checkpoint_archive_url(checkpoint_id).result()\n"
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
        Invalid(
            "import pytrio as trio\nsp = trio.SamplingParams(64)\n",
            fixed=None,
            message_contains="no positional arguments",
        ),
        Invalid(
            "import pytrio as trio\n"
            "def archive_url(rest: trio.RestClient, run_id, checkpoint_id):\n"
            "    try:\n"
            "        return rest.get_checkpoint_archive_url(run_id, checkpoint_id).result()\n"
            "    except ValueError:\n"
            "        return rest.get_checkpoint_archive_url(checkpoint_id).result()\n",
            fixed="import pytrio as trio\n"
            "def archive_url(rest: trio.RestClient, run_id, checkpoint_id):\n"
            "    try:\n"
            "        return rest.get_checkpoint_archive_url(checkpoint_id).result()\n"
            "    except ValueError:\n"
            "        return rest.get_checkpoint_archive_url(checkpoint_id).result()\n",
            line=4,
        ),
    )

    @classmethod
    def report_issue(
        cls, checker: conformance.ConformanceChecker, issue: conformance.Issue, node: ast.AST
    ) -> None:
        if isinstance(node, ast.Call) and _in_compat_shim(checker, node, issue.allowed):
            return
        earlier = ""
        if issue.earlier is not None:
            version, _count, names = issue.earlier
            earlier = f"; pytrio {version} took ({', '.join(names)})"
        given = str(issue.given)
        advice = _ADVICE.get(issue.owner.removesuffix("_async"))
        fix: Fix | None = None
        if issue.owner in _DROP_FIRST and issue.given == 2 and issue.allowed == 1:
            fix = safe_fix("Drop the run id", edit(node, "Call", drop_positional(0)))
            advice = "drop the run id: 0.2 keys archives by checkpoint id"
        checker.report(
            node,
            cls.message.format(
                owner=issue.owner,
                allowed=_allowed(issue),
                target=issue.target,
                given=given,
                earlier=earlier,
                advice=f"; {advice}" if advice else "",
            ),
            fix=fix,
            code=cls.code,
        )


def _in_compat_shim(checker: conformance.ConformanceChecker, call: ast.Call, allowed: int) -> bool:
    """Inside `try:` whose `except TypeError:` calls the current signature: a shim for
    both releases. Only looked for when a finding is due, among the `try` statements around the
    call in its own function (`ConformanceChecker.enclosing_trys`): a `try` whose body holds the
    call's line encloses it."""
    stack = checker.ctx.function_stack
    function = stack[-1] if stack else None
    return any(
        owner is function and _compat_shim(node, call, allowed)
        for node, owner in checker.enclosing_trys
    )


def _callee(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)


def _catches_type_error(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(k, ast.Name) and k.id == "TypeError" for k in kinds)


def _compat_shim(try_node: ast.Try, call: ast.Call, allowed: int) -> bool:
    """`try: old(a, b)` / `except TypeError: old(b)`: the handler calls the same callee with
    the target's positional arguments, so the code works on the target release."""
    body = try_node.body
    if not (body[0].lineno <= call.lineno <= (body[-1].end_lineno or body[-1].lineno)):
        return False
    name = _callee(call)
    for handler in try_node.handlers:
        if not _catches_type_error(handler):
            continue
        for stmt in handler.body:
            for inner in walk(stmt):
                if (
                    isinstance(inner, ast.Call)
                    and _callee(inner) == name
                    and len(inner.args) <= allowed
                    and not any(isinstance(a, ast.Starred) for a in inner.args)
                ):
                    return True
    return False


def _allowed(issue: conformance.Issue) -> str:
    function = conformance.callee_function(issue)
    if function is not None and not function.params:
        return "no arguments"
    if issue.allowed == 0:
        return "no positional arguments"
    return conformance.plural(issue.allowed, "positional argument")
