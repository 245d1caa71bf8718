"""PTR208 invalid-checkpoint-name: a checkpoint name the SDK rejects or rewrites."""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from pytrio_facts.sdk import LIMITS
from trio_lint.output.diagnostics import Applicability, Severity
from trio_lint.rules._common import argument
from trio_lint.rules.base import Invalid, LooksAt, Rule, Valid, edit, limited, safe_fix
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
    # 0.2.8 is the first release that checks the name on the client; 0.2.0-0.2.7 send it as written.
    min_sdk = "0.2.8"
    doc = f"""
## What it does
Flags a string literal passed as the name of `save_state` or `save_weights_for_sampler` (or
their `_async` twins) that the SDK rejects or renames. An error: a name that, with spaces replaced
by `-`, does not match `{LIMITS.checkpoint_name_pattern}`. A warning: a name with spaces, or one
longer than {LIMITS.checkpoint_name_max_length} characters. The literal parts of an f-string are
checked for characters the pattern never allows (`/`, `:`, ...).

## Why is this bad?
From pytrio 0.2.8 the SDK checks the name on the client before the save is sent. It replaces
spaces with `-` and logs a warning; a name that still does not match the pattern raises
`ValidationError` (for example `"a/b"`), and a save at the end of a long run that fails on its
name loses the run's weights. A valid name longer than {LIMITS.checkpoint_name_max_length}
characters is not an error: the SDK saves it under its first
{LIMITS.checkpoint_name_max_length - 20} characters followed by 20 hex digits of the name's
SHA-256, with a warning. Either rename means the checkpoint is not stored under the name in the
code, so code that later refers to it by that name does not find it; use the `path` the save
returns, or a name the SDK keeps as written.

pytrio 0.2.0 to 0.2.7 send the name as written, with no check on the client: the rule applies
from target-version 0.2.8.

## Fix safety
Replacing spaces with `-` is safe: it is exactly what the SDK does to the name. Other characters
and long names have no fix.

## References
- pytrio 0.2.9: `pytrio.TrainingClient.save_state`, `pytrio.TrainingClient.save_weights_for_sampler`
"""
    evidence = """
- 0.2.9 normalises every checkpoint name on the client: spaces become `-` with a warning, then a
  name that does not `fullmatch` the pattern raises ValidationError, then a valid name over 200
  characters is shortened to its first 180 characters plus the first 20 hex digits of its
  SHA-256, with a warning, and the save goes ahead (`029:client/builders/training.py:41-82`);
  `save_state` and `save_weights_for_sampler` build their payload through it
  (`029:client/builders/training.py:149-157`, `029:client/training.py:728-734,788-799`). The
  saved checkpoint's `path` is the URI the service returns
  (`029:client/training.py:743-751`, `029:client/adapters/training.py:100`).
- 0.2.8 is the first release with this check, the same steps
  (`028:client/builders/training.py:42-84`).
  0.2.0 to 0.2.7 pass the name unchanged into the save payload, a plain `name: str`
  (`020:client/builders/training.py:84-85`, `020:protocol/actor/events/trainer/save.py:15`,
  `027:client/builders/training.py:100-112`, `027:protocol/actor/events/trainer/save.py:22`);
  what the service does with such a name there is not in the SDK, so the rule claims nothing
  below 0.2.8 (`min_sdk`).
- The pattern and length the rule uses: `pytrio_facts/sdk.py`.
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
        # 0.2.7 sends the name as written: no client-side check to report.
        Valid(
            "import pytrio as trio\n"
            "def save(train: trio.TrainingClient):\n"
            "    train.save_state('runs/final checkpoint').result()\n",
            config={"target-version": "0.2.7"},
        ),
        # Exactly 200 characters: kept as written.
        Valid(
            "import pytrio as trio\n"
            "def save(train: trio.TrainingClient):\n"
            f"    train.save_state('{'a' * 200}').result()\n"
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
        # Over 200 characters: saved under a shortened name, not an error.
        Invalid(
            "import pytrio as trio\n"
            "def save(train: trio.TrainingClient):\n"
            f"    train.save_state('{'a' * 201}').result()\n",
            fixed=None,
            line=3,
            message_contains="first 180 characters",
        ),
        # The SDK matches the whole name: a trailing newline is rejected.
        Invalid(
            "import pytrio as trio\n"
            "def save(train: trio.TrainingClient):\n"
            "    train.save_state('step-1\\n').result()\n",
            fixed=None,
            message_contains="\\n",
        ),
        # Allowed characters, but a name must not start with `-` or end with `.`.
        Invalid(
            "import pytrio as trio\n"
            "def save(train: trio.TrainingClient):\n"
            "    train.save_weights_for_sampler('final.').result()\n",
            fixed=None,
            message_contains="end with `.`",
        ),
    )
    reach = limited("queue-worker")

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
        # The SDK's order: spaces to `-`, then the pattern (whole name), then the length.
        dashed = text.replace(" ", "-")
        if not _PATTERN.fullmatch(dashed):
            bad = sorted({c for c in dashed if not _ALLOWED.fullmatch(c)})
            if bad:
                problem = f"is rejected (`{_shown(bad)}`): use letters, digits, `.`, `_`, `-`"
            else:
                problem = (
                    "is rejected: it must start with a letter or digit and not end with `.`"
                    if dashed
                    else "is rejected: it is empty"
                )
            self.report(node, self.message.format(name=text, problem=problem))
            return
        limit = LIMITS.checkpoint_name_max_length
        if len(dashed) > limit:
            self.report(
                node,
                self.message.format(
                    name=text if len(text) <= 60 else f"{text[:40]}...",
                    problem=(
                        f"is {len(dashed)} characters, over {limit}: the SDK saves it as its "
                        f"first {limit - 20} characters followed by 20 hex digits of its SHA-256, "
                        "so it is not stored under this name; shorten it or use the `path` the "
                        "save returns"
                    ),
                ),
                severity=Severity.WARNING,
            )
            return
        if dashed == text:
            return
        fix = safe_fix("Replace spaces with `-`", edit(node, "SimpleString", _dash_spaces))
        self.report(
            node,
            self.message.format(name=text, problem=f"has spaces: the SDK renames it to {dashed!r}"),
            severity=Severity.WARNING,
            fix=fix if fixable else None,
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
                    problem=f"is rejected (`{_shown(bad)}`): use letters, digits, `.`, `_`, `-`",
                ),
            )


def _shown(characters: list[str]) -> str:
    """The rejected characters as text a finding can show (`\\n` for a newline)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in characters)
