"""PTR501 narrow-exception-handler: `except ValueError` around PyTRIO calls misses its errors."""

from __future__ import annotations

import ast

from trio_lint.output.diagnostics import Severity
from trio_lint.rules.base import Invalid, Rule, Valid, limited
from trio_lint.semantics.receivers import Kind

# What the old skill text said the SDK raises; none of them is a PyTrioError.
_NARROW = frozenset({"ValueError", "ValidationError", "TimeoutError", "KeyError", "RuntimeError"})
_BROAD = frozenset({"Exception", "BaseException", "PyTrioError", "OSError"})


def _names(handler_type: ast.expr | None) -> list[ast.expr]:
    if handler_type is None:
        return []
    if isinstance(handler_type, ast.Tuple):
        return list(handler_type.elts)
    return [handler_type]


class NarrowExceptionHandler(Rule):
    code = "PTR501"
    name = "narrow-exception-handler"
    message = (
        "`except {caught}` does not catch pytrio 0.2's errors (`trio.PyTrioError`: "
        "ValidationError, AuthError, EventFailedError, ... are not ValueError): "
        "add `trio.PyTrioError`"
    )
    severity = Severity.WARNING
    # Facts of PyTRIO's own SDK (not Tinker's): see the doc's References.
    pytrio_only = True
    min_sdk = "0.2"
    doc = """
## What it does
Flags a `try` whose body calls PyTRIO client methods (or waits on their futures) and whose
handlers catch only `ValueError`, `pydantic.ValidationError`, `TimeoutError`, `KeyError` or
`RuntimeError`.

## Why is this bad?
pytrio 0.2.9 raises its own hierarchy rooted at `trio.PyTrioError`:
`pytrio.errors.base.ValidationError` for rejected arguments, `AuthError`, `ControlAPIError`,
`EventFailedError` for a failed remote step, and more. None of them subclasses `ValueError`, so an `except ValueError` handler never runs and the
error escapes. Some input checks still raise plain `ValueError` (unknown loss, shape mismatch),
so catch both.

## Fix safety
No fix: catching more changes control flow.

## References
- pytrio 0.2.9: `pytrio.PyTrioError`, `pytrio.errors`
"""
    evidence = """
- (`029:errors/base.py:8`)
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "try:\n    out = train.forward_backward(batch).result()\n"
            "except (trio.PyTrioError, ValueError) as err:\n    print(err)\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "try:\n    value = int(text)\nexcept ValueError:\n    value = 0\n"
        ),
        Valid(
            "import pytrio as trio\nfrom pytrio.errors.event import EventFailedError\n"
            "try:\n    out = train.forward_backward(batch).result()\n"
            "except EventFailedError:\n    out = None\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "try:\n    out = train.optim_step(adam).result()\nexcept Exception:\n    raise\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "try:\n    out = train.forward_backward(batch).result()\n"
            "except ValueError as err:\n    print(err)\n",
            config={"target-version": "0.1"},
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "try:\n    out = train.forward_backward(batch, 'cross_entropy').result()\n"
            "except ValueError as err:\n    print(err)\n",
            line=4,
        ),
        Invalid(
            "import pytrio as trio\nfrom pydantic import ValidationError\n"
            "def sample(sampler: trio.SamplingClient, p, sp):\n"
            "    try:\n"
            "        return sampler.sample(p, sampling_params=sp).result()\n"
            "    except (ValidationError, TimeoutError):\n"
            "        return None\n",
            message_contains="ValidationError, TimeoutError",
        ),
        Invalid(
            "import pytrio as trio\n"
            "svc = trio.ServiceClient()\n"
            "try:\n    train = svc.create_lora_training_client(base_model='m', rank=128)\n"
            "except ValueError:\n    train = svc.create_lora_training_client(base_model='m')\n",
        ),
    )
    reach = limited(
        "call-site-method-parameter",
    )

    def visit_Try(self, node: ast.Try) -> None:
        if not node.handlers or not self._calls_sdk(node.body):
            return
        caught: list[str] = []
        for handler in node.handlers:
            if handler.type is None:
                return
            for expr in _names(handler.type):
                qualname = self.model.qualified_name(expr)
                if qualname is not None and qualname.startswith("pytrio"):
                    return  # an SDK error class (PyTrioError, pytrio.errors.*)
                name = expr.attr if isinstance(expr, ast.Attribute) else getattr(expr, "id", "")
                if name in _BROAD or name not in _NARROW:
                    return
                caught.append(name)
        if caught:
            shown = caught[0] if len(caught) == 1 else f"({', '.join(caught)})"
            self.report(node.handlers[0], self.message.format(caught=shown))

    visit_TryStar = visit_Try

    def _calls_sdk(self, body: list[ast.stmt]) -> bool:
        receivers = self.model
        for stmt in body:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Call):
                    if receivers.client_call(node) is not None:
                        return True
                    if self.model.is_sdk(node.func, "ServiceClient"):
                        return True
                elif isinstance(node, ast.Await):
                    typ = receivers.type_of(node.value)
                    if typ is not None and typ.kind in (Kind.API_FUTURE, Kind.COROUTINE):
                        return True
        return False
