"""PTR109 client-timeout: a short client-side timeout around a PyTRIO request."""

from __future__ import annotations

import ast

from pytrio_facts.sdk import LIMITS
from trio_lint.output.diagnostics import Severity
from trio_lint.rules._common import argument
from trio_lint.rules.base import PYTRIO, Invalid, LooksAt, Rule, Valid, limited
from trio_lint.semantics.receivers import FUTURE_KINDS, Kind

_WINDOW = LIMITS.retry_window_seconds


def _seconds(expr: ast.expr | None, model, depth: int = 6) -> float | None:
    """A number of seconds written as a literal or a product of them, also through a name,
    `Settings.X`, `args.x` or a parameter the model follows (`value_of`)."""
    if isinstance(expr, ast.Constant) and (type(expr.value) is int or type(expr.value) is float):
        return float(expr.value)  # not a bool: `True` is no number of seconds
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
        left, right = _seconds(expr.left, model, depth), _seconds(expr.right, model, depth)
        return left * right if left is not None and right is not None else None
    if depth and isinstance(expr, ast.Name | ast.Attribute | ast.Subscript | ast.Call):
        return _seconds(model.value_of(expr), model, depth - 1)
    return None


def _brief(expr: ast.expr, limit: int = 40) -> str:
    """`expr` as written when short, else shortened at a node boundary (`rest.get_x(...)`), so
    the message never cuts a name or a call in half."""
    text = ast.unparse(expr)
    if len(text) <= limit:
        return text
    if isinstance(expr, ast.Call):
        return f"{_brief(expr.func, limit)}(...)"
    if isinstance(expr, ast.Attribute):
        return f"{_brief(expr.value, limit)}.{expr.attr}"
    if isinstance(expr, ast.Subscript):
        return f"{_brief(expr.value, limit)}[...]"
    if isinstance(expr, ast.Await):
        return f"await {_brief(expr.value, limit)}"
    return "..."


class ClientTimeout(Rule):
    code = "PTR109"
    sdks = PYTRIO  # its facts are PyTRIO's client limits
    name = "client-timeout"
    looks_at = LooksAt(calls=frozenset({"result", "wait_for"}))
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

A read-only `RestClient` query (`get_*`, `list_*`) is not reported: its requests retry for as
long (`control_retry_timeout_seconds`), but a timeout there loses nothing and asking again is
safe, so a short deadline is the caller's choice.

## Fix safety
No fix: dropping the timeout changes how long the caller may wait.

## References
- pytrio 0.2.9: `pytrio.configure` (`training_retry_timeout_seconds`, `control_retry_timeout_seconds`), `pytrio.types.APIFuture.result`
"""
    evidence = """
- (`029:config/config.py:79-104`)
- REST queries: `029:client/rest.py` get_*/list_* are Control reads through
  `transport/control/http_base.py` `_request` (request_with_retry_timeout,
  control_retry_timeout_seconds = 15 * 60); nothing on the service changes, so a TimeoutError
  there loses no work and a retry submits nothing twice. delete_checkpoint and
  download_checkpoint stay reported (a mutation; a download into a path).
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
        Valid(
            "import pytrio as trio\n"
            "rest = trio.ServiceClient().create_rest_client()\n"
            "runs = rest.list_training_runs().result(5 * 60)\n"
            "url = rest.get_checkpoint_archive_url(checkpoint_id).result(timeout=30)\n"
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
            "rest.delete_checkpoint(checkpoint_id).result(5 * 60)\n",
            message_contains="300 s",
        ),
        Invalid(
            "import pytrio as trio\n"
            "def save(train: trio.TrainingClient, checkpoint_name_for_the_final_epoch):\n"
            "    return train.save_state(checkpoint_name_for_the_final_epoch).result(timeout=60)\n",
            message_contains="`train.save_state(...).result()`",
        ),
    )
    reach = limited(
        "queue-worker",
    )

    def _rest_query(self, expr: ast.expr) -> bool:
        """A `RestClient.get_*` / `list_*` query (also through a name): it changes nothing on
        the service, so after a timeout asking again is safe and the caller's short deadline
        is a choice (fail fast), not a lost or doubled request."""
        for _ in range(4):
            if isinstance(expr, ast.Call):
                found = self.model.client_call(expr)
                if found is not None:
                    kind, method = found
                    return kind is Kind.REST_CLIENT and method.startswith(("get_", "list_"))
            if not isinstance(expr, ast.Name | ast.Attribute):
                return False
            expr = self.model.value_of(expr)  # type: ignore[assignment]  # None leaves the loop: no Name or Attribute
        return False

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "result":
            typ = self.model.type_of(func.value)
            if typ is None or typ.kind not in FUTURE_KINDS:
                return
            seconds = _seconds(argument(node, 0, "timeout"), self.model)
            if seconds is None or seconds >= _WINDOW:
                return
            if self._rest_query(func.value):
                return
            what = f"{_brief(func.value)}.result()"
        elif (isinstance(func, ast.Attribute) and func.attr == "wait_for") or (
            isinstance(func, ast.Name) and func.id == "wait_for"
        ):
            awaited = argument(node, 0, "fut")
            typ = self.model.type_of(awaited) if awaited is not None else None
            if typ is None or typ.kind not in (*FUTURE_KINDS, Kind.COROUTINE):
                return
            seconds = _seconds(argument(node, 1, "timeout"), self.model)
            if seconds is None or seconds >= _WINDOW:
                return
            if self._rest_query(awaited):  # type: ignore[arg-type]  # not None: typed above
                return
            what = f"asyncio.wait_for({_brief(awaited)}, ...)"  # type: ignore[arg-type]  # not None: typed above
        else:
            return
        self.report(node, self.message.format(seconds=seconds, what=what))
