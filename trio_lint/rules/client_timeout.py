"""PTR109 client-timeout: a short client-side timeout around a PyTRIO request."""

from __future__ import annotations

import ast

from pytrio_facts.sdk import LIMITS
from trio_lint.diagnostics import Severity
from trio_lint.rules._common import argument
from trio_lint.rules.base import Invalid, Rule, Valid, limited
from trio_lint.semantics.receivers import FUTURE_KINDS, Kind

_WINDOW = LIMITS.retry_window_seconds


def _seconds(expr: ast.expr | None) -> float | None:
    if isinstance(expr, ast.Constant) and type(expr.value) in (int, float):
        return float(expr.value)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
        left, right = _seconds(expr.left), _seconds(expr.right)
        return left * right if left is not None and right is not None else None
    return None


class ClientTimeout(Rule):
    code = "PTR109"
    name = "client-timeout"
    call_methods = frozenset({"result", "wait_for"})
    message = (
        "A {seconds:g} s client-side timeout around `{what}`: the SDK already retries for up to "
        f"{_WINDOW // 60} minutes and the request keeps running after the timeout; wait without "
        "one (or tune `trio.configure(...)`)"
    )
    severity = Severity.WARNING
    doc = f"""
## What it does
Flags `future.result(timeout=T)` on a PyTRIO future and `asyncio.wait_for(<PyTRIO call>, T)`
where `T` is a number below the SDK's own retry window ({_WINDOW} s).

## Why is this bad?
pytrio 0.2.9 retries transient failures for up to 15 minutes before an error surfaces. A shorter timeout in the caller turns a slow training or
sampling step into `TimeoutError` while the request itself still runs on the service, so a retry loop around it submits the step
twice.

## Fix safety
No fix: dropping the timeout changes how long the caller may wait.

## References
- pytrio 0.2.9: `pytrio.configure` (`training_retry_timeout_seconds`), `pytrio.types.APIFuture.result`
"""
    evidence = """
- (`029:config/config.py:79-104`)
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "def step(train: trio.TrainingClient, batch):\n"
            "    return train.forward_backward(batch, 'cross_entropy').result()\n"
        ),
        Valid(
            "import pytrio as trio\nfrom concurrent.futures import ThreadPoolExecutor\n"
            "pool = ThreadPoolExecutor()\nvalue = pool.submit(work).result(timeout=5)\n"
        ),
        Valid(
            "import asyncio\nimport pytrio as trio\n"
            "async def fetch(session, url):\n"
            "    return await asyncio.wait_for(session.get(url), timeout=10)\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "def step(train: trio.TrainingClient, batch):\n"
            "    return train.forward_backward(batch).result(timeout=3600)\n"
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "def step(train: trio.TrainingClient, batch):\n"
            "    return train.forward_backward(batch, 'cross_entropy').result(timeout=30)\n",
            line=3,
            message_contains="30 s",
        ),
        Invalid(
            "import asyncio\nimport pytrio as trio\n"
            "async def gen(sampler: trio.SamplingClient, p, sp):\n"
            "    return await asyncio.wait_for(sampler.sample_async(p, sampling_params=sp), 60)\n",
        ),
        Invalid(
            "import pytrio as trio\n"
            "rest = trio.ServiceClient().create_rest_client()\n"
            "runs = rest.list_training_runs().result(5 * 60)\n",
            message_contains="300 s",
        ),
    )
    reach = limited(
        "local-name",
        "module-constant",
        "class-attribute",
        "init-attribute",
        "helper-return",
        "call-site-parameter",
        "call-site-method-parameter",
        "dataclass-default",
        "pydantic-default",
        "argparse-default",
        "config-dict",
        "loop-variable",
    )

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "result":
            typ = self.model.type_of(func.value)
            if typ is None or typ.kind not in FUTURE_KINDS:
                return
            seconds = _seconds(argument(node, 0, "timeout"))
            if seconds is None or seconds >= _WINDOW:
                return
            what = f"{ast.unparse(func.value)[:40]}.result()"
        elif (isinstance(func, ast.Attribute) and func.attr == "wait_for") or (
            isinstance(func, ast.Name) and func.id == "wait_for"
        ):
            awaited = argument(node, 0, "fut")
            typ = self.model.type_of(awaited) if awaited is not None else None
            if typ is None or typ.kind not in (*FUTURE_KINDS, Kind.COROUTINE):
                return
            seconds = _seconds(argument(node, 1, "timeout"))
            if seconds is None or seconds >= _WINDOW:
                return
            what = f"asyncio.wait_for({ast.unparse(awaited)[:40]}, ...)"  # type: ignore[arg-type]
        else:
            return
        self.report(node, self.message.format(seconds=seconds, what=what))
