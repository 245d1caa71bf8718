"""PTR404 client-close: `close()` or `with` on a PyTRIO client, which has neither."""

from __future__ import annotations

import ast

from trio_lint.output.diagnostics import Severity
from trio_lint.rules.base import Invalid, LooksAt, Rule, Valid
from trio_lint.semantics.receivers import CLIENT_KINDS

_CLOSERS = ("close", "aclose", "shutdown", "disconnect")


class ClientClose(Rule):
    code = "PTR404"
    supersedes = frozenset(
        f"pytrio.{client}.{name}"
        for client in ("ServiceClient", "TrainingClient", "SamplingClient", "RestClient")
        for name in _CLOSERS
    )
    looks_at = LooksAt(calls=frozenset(_CLOSERS))
    name = "client-close"
    message = "`{kind}` has no `{what}`: clients are released with the process; remove it"
    severity = Severity.ERROR
    # Facts of PyTRIO's own SDK (not Tinker's): see the doc's References.
    pytrio_only = True
    doc = """
## What it does
Flags `client.close()` (also `aclose`, `shutdown`, `disconnect`) and `with client:` on a PyTRIO
ServiceClient, TrainingClient, SamplingClient or RestClient.

## Why is this bad?
None of the four clients defines `close()` or the context-manager protocol in pytrio 0.2.9, so a cleanup line added out of
`httpx.Client`/`requests.Session` habit raises `AttributeError` (or `TypeError` for `with`), at
the very end of a run, after the work is done but before the results are written.

## Fix safety
No fix (removing a statement is left to the author).

## References
- pytrio 0.2.9: `pytrio.ServiceClient`, `pytrio.TrainingClient`, `pytrio.SamplingClient`, `pytrio.RestClient`
"""
    evidence = """
- None of `ServiceClient` (`029:client/service.py:65`), `TrainingClient`
  (`029:client/training.py:150`), `SamplingClient` (`029:client/sampling.py:24`), `RestClient`
  (`029:client/rest.py:82`) defines `close`, `aclose`, `shutdown`, `disconnect`, `__enter__`,
  `__exit__` or `__getattr__` (the `close` at `029:client/training.py:142` is a private helper
  class's).
- Since Python 3.11 `with` on an object without the protocol raises TypeError:
  https://docs.python.org/3/whatsnew/3.11.html#other-language-changes
- The habits: https://www.python-httpx.org/api/#client (`Client.close`),
  https://requests.readthedocs.io/en/latest/api/#requests.Session.close
"""
    VALID = (
        Valid("import pytrio as trio\nsvc = trio.ServiceClient()\n"),
        Valid("import pytrio as trio\nimport httpx\nclient = httpx.Client()\nclient.close()\n"),
        Valid(
            "import pytrio as trio\nfrom concurrent.futures import ThreadPoolExecutor\n"
            "with ThreadPoolExecutor() as pool:\n    pool.shutdown()\n"
        ),
        Valid(
            "import pytrio as trio\nsvc = trio.ServiceClient()\n"
            "models = svc.get_supported_models()\nhandle = open('log.txt')\nhandle.close()\n"
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\nsvc = trio.ServiceClient()\nsvc.close()\n",
            line=3,
            message_contains="ServiceClient",
        ),
        Invalid(
            "import pytrio as trio\n"
            "def finish(train: trio.TrainingClient):\n"
            "    train.save_state('final').result()\n"
            "    train.close()\n",
        ),
        Invalid(
            "import pytrio as trio\n"
            "svc = trio.ServiceClient()\n"
            "with svc.create_sampling_client(base_model='m') as sampler:\n"
            "    print(sampler.model_id)\n",
            message_contains="context manager",
        ),
    )

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr in _CLOSERS):
            return
        typ = self.model.type_of(func.value)
        if typ is not None and typ.kind in CLIENT_KINDS:
            self.report(node, self.message.format(kind=typ.kind, what=f"{func.attr}()"))

    def _with(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            typ = self.model.type_of(item.context_expr)
            if typ is not None and typ.kind in CLIENT_KINDS:
                self.report(
                    item.context_expr,
                    self.message.format(kind=typ.kind, what="context manager (`with`)"),
                )

    visit_With = _with
    visit_AsyncWith = _with
