"""PTR208 invalid-checkpoint-name: a checkpoint name the SDK rejects or rewrites."""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from pytrio_facts.sdk import LIMITS
from trio_lint.output.diagnostics import Applicability, Severity
from trio_lint.rules._common import argument
from trio_lint.rules.base import Invalid, LooksAt, Rule, Valid, edit, safe_fix
from trio_lint.semantics.receivers import Kind

if TYPE_CHECKING:
    import libcst as cst

_PATTERN = re.compile(LIMITS.checkpoint_name_pattern)
_ALLOWED = re.compile(r"[A-Za-z0-9._-]*")
_METHODS = (
    "save_state",
    "save_state_async",
    "save_weights_for_sampler",
    "save_weights_for_sampler_async",
)


def _dash_spaces(node: cst.CSTNode) -> cst.CSTNode:
    import libcst as cst

    assert isinstance(node, cst.SimpleString)
    text = node.value
    start = len(node.prefix) + len(node.quote)
    body = text[start : len(text) - len(node.quote)]
    return node.with_changes(value=text[:start] + body.replace(" ", "-") + node.quote)


class InvalidCheckpointName(Rule):
    code = "PTR208"
    looks_at = LooksAt(calls=frozenset(_METHODS))
    name = "invalid-checkpoint-name"
    message = "Checkpoint name {name!r} {problem}"
    severity = Severity.ERROR
    # Facts of PyTRIO's own SDK (not Tinker's): see the doc's References.
    pytrio_only = True
    fix_safety = Applicability.SAFE
    min_sdk = "0.2"
    doc = f"""
## What it does
Flags a string literal (or the literal parts of an f-string) passed as the name of `save_state`
or `save_weights_for_sampler` that does not match `{LIMITS.checkpoint_name_pattern}` or is longer
than {LIMITS.checkpoint_name_max_length} characters.

## Why is this bad?
pytrio 0.2.9 validates the name on the client: spaces are replaced by `-` with a warning, any
other invalid character raises `ValidationError` before the save is sent (for example `"a/b"`). A save at
the end of a long run that fails on its name loses the run's weights.

## Fix safety
Replacing spaces with `-` is safe: it is exactly what the SDK does to the name. Other characters
have no fix.

## References
- pytrio 0.2.9: `pytrio.TrainingClient.save_state`, `pytrio.TrainingClient.save_weights_for_sampler`
"""
    evidence = """
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "def save(train: trio.TrainingClient, i: int):\n"
            "    train.save_state('step-100').result()\n"
            "    train.save_weights_for_sampler(f'run_{i}.final').result()\n"
        ),
        Valid("import pytrio as trio\nimport torch\ntorch.save(model.state_dict(), 'a/b c.pt')\n"),
        Valid(
            "import pytrio as trio\nfrom accelerate import Accelerator\n"
            "accelerator = Accelerator()\naccelerator.save_state('checkpoints/step 100')\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "def save(train: trio.TrainingClient):\n"
            "    train.save_state('runs/final checkpoint').result()\n",
            config={"target-version": "0.1"},
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "train = trio.ServiceClient().create_lora_training_client(base_model='m')\n"
            "train.save_state('final checkpoint').result()\n",
            fixed="import pytrio as trio\n"
            "train = trio.ServiceClient().create_lora_training_client(base_model='m')\n"
            "train.save_state('final-checkpoint').result()\n",
            line=3,
        ),
        Invalid(
            "import pytrio as trio\ntrain.save_weights_for_sampler('runs/final').result()\n",
            fixed=None,
            message_contains="/",
        ),
        Invalid(
            "import pytrio as trio\n"
            "def save(train: trio.TrainingClient, epoch: int):\n"
            "    return train.save_state(f'epoch:{epoch}')\n",
        ),
    )

    def visit_Call(self, node: ast.Call) -> None:
        found = self.model.client_call(node, methods=_METHODS)
        if found is None or found[0] is not Kind.TRAINING_CLIENT or found[1] not in _METHODS:
            return
        name = argument(node, 0, "name")
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            self._check_literal(name, name.value)
        elif isinstance(name, ast.JoinedStr):
            self._check_fstring(name)
        elif name is not None:
            # A name, `Settings.X`, `args.name`...: reported where it is used, without a fix
            # (the constant may serve other uses).
            given = self.model.literal(name)
            if isinstance(given, ast.Constant) and isinstance(given.value, str):
                self._check_literal(name, given.value, fixable=False)  # type: ignore[arg-type]  # reported at the name; no fix reads it as a Constant
                return
            bound: ast.expr | None = name
            for _ in range(6):
                bound = self.model.value_of(bound)
                if isinstance(bound, ast.JoinedStr):
                    self._check_fstring(bound)
                    return
                if bound is None:
                    return

    def _check_literal(self, node: ast.Constant, text: str, *, fixable: bool = True) -> None:
        if len(text) > LIMITS.checkpoint_name_max_length:
            self.report(node, self.message.format(name=text, problem="is too long"))
            return
        if _PATTERN.match(text):
            return
        dashed = text.replace(" ", "-")
        if _PATTERN.match(dashed):
            fix = safe_fix("Replace spaces with `-`", edit(node, "SimpleString", _dash_spaces))
            self.report(
                node,
                self.message.format(
                    name=text, problem=f"has spaces: the SDK renames it to {dashed!r}"
                ),
                severity=Severity.WARNING,
                fix=fix if fixable else None,
            )
            return
        bad = sorted({c for c in dashed if not _ALLOWED.fullmatch(c)}) or [dashed[:1] or "''"]
        self.report(
            node,
            self.message.format(
                name=text,
                problem=f"is rejected (`{''.join(bad)}`): use letters, digits, `.`, `_`, `-`",
            ),
        )

    def _check_fstring(self, node: ast.JoinedStr) -> None:
        literal = "".join(
            part.value
            for part in node.values
            if isinstance(part, ast.Constant) and isinstance(part.value, str)
        )
        bad = sorted({c for c in literal.replace(" ", "-") if not _ALLOWED.fullmatch(c)})
        if bad:
            self.report(
                node,
                self.message.format(
                    name=ast.unparse(node),
                    problem=f"is rejected (`{''.join(bad)}`): use letters, digits, `.`, `_`, `-`",
                ),
            )
