"""PTR213 unknown-attribute: a method, attribute or name that no pytrio release has."""

from __future__ import annotations

import ast
import difflib
from typing import TYPE_CHECKING

from pytrio_facts.api_model import Class, Symbol, api_data
from trio_lint.output.diagnostics import Severity
from trio_lint.rules.base import Invalid, Valid, limited
from trio_lint.rules.checkers import conformance
from trio_lint.semantics.receivers import Kind

if TYPE_CHECKING:
    from trio_lint.semantics.context import LintContext

# How a library builds its own array from a NumPy array (the way back from a pytrio object
# whose class has `from_<library>` but no `to_<library>`); facts of these libraries, not pytrio's.
_FROM_NUMPY = {"torch": "torch.from_numpy"}


class UnknownAttribute(conformance.ConformanceRule):
    code = "PTR213"
    name = "unknown-attribute"
    message = "{what}: {consequence}{hint}"
    severity = Severity.ERROR
    # Facts of PyTRIO's own SDK (not Tinker's): see the doc's References.
    pytrio_only = True
    doc = """
## What it does
Flags a method called on a PyTRIO client or future, a field read from a PyTRIO result or type, or
a name taken from the `pytrio` or `pytrio.types` module that no released pytrio has. Only
expressions known to hold a PyTRIO object are checked (SDK names, clients made by the SDK,
parameters annotated with SDK types, results of `.result()`). Names of an older or newer release
are PTR003's, PTR006's and PTR007's. A member of a response used on its future
(`fut.model_dump_json()` before `.result()`) is PTR101 missing-result's.

## Why is this bad?
It raises `AttributeError` (an import, `ImportError`) at run time, often after the slow part of a
training script already ran. Such names usually come from other SDKs (`generate`, `train_step`,
`loss`) or from guessing.

## Fix safety
No fix: the closest existing name is suggested, but whether it was meant is not known. A misnamed
wait on an `APIFuture` (`fut.result_async()`) gets the way that exists there: `await fut` inside
`async def` (every pytrio release's `APIFuture` is awaitable), `fut.result()` in sync code. A
classmethod (`TensorData.from_torch`, which builds a new object) is never offered for a missing
method with another verb: for `x.to_torch()` on a `TensorData` the message gives the conversion
the release has, `torch.from_numpy(x.to_numpy())`.

## References
- pytrio 0.2.9: `pytrio.TrainingClient`, `pytrio.SamplingClient`, `pytrio.types.ForwardBackwardOutput`
- pytrio 0.2.9: `pytrio.types.TensorData.to_numpy`, `pytrio.types.TensorData.from_torch` (a classmethod)
"""
    evidence = """
- generated: `pytrio_facts/api_versions.json` (every release's public API)
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "def step(train: trio.TrainingClient, batch):\n"
            "    return train.forward_backward(batch, 'cross_entropy').result().metrics\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "def dump(out: trio.types.ForwardBackwardOutput):\n"
            "    return out.model_dump_json()\n"
        ),
        Valid("import pytrio as trio\nimport torch\nmodel.generate(ids).loss\n"),
        Valid(
            "import pytrio as trio\n"
            "svc = trio.ServiceClient()\n"
            "print(svc.username, svc.workspace_name)\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "import torch\n"
            "def logprobs(train: trio.TrainingClient, batch):\n"
            "    out = train.forward_backward(batch, 'cross_entropy').result()\n"
            "    return torch.from_numpy(out.loss_fn_outputs[0]['logprobs'].to_numpy())\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "import torch\n"
            "weights = trio.types.TensorData.from_torch(torch.ones(4))\n"
        ),
        # The response's method on its future: PTR101 missing-result's finding.
        Valid(
            "import pytrio as trio\n"
            "def dump(training: trio.TrainingClient, data):\n"
            "    fut = training.forward_backward(data, 'cross_entropy')\n"
            "    return fut.model_dump_json()\n"
        ),
        # A Markdown block listing the fields of the type its heading names: `result` is that
        # type there, not what an earlier block left in it.
        Valid(
            "```python\nimport pytrio as trio\n"
            "result = train.forward_backward(data, 'cross_entropy').result()\n```\n\n"
            "## SampleResponse\n\n```python\n"
            "result.sequences        # list[SampleSequence]\n"
            "result.prompt_logprobs  # list[float | None]\n```\n",
            path="types.md",
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "def step(train: trio.TrainingClient, batch):\n"
            "    return train.train_step(batch).result()\n",
            line=3,
            message_contains="no pytrio release has this method",
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def step(training: trio.TrainingClient, data):\n"
            "    fut = training.forward_backward(data, 'cross_entropy')\n"
            "    return await fut.result_async()\n",
            line=4,
            message_contains="`APIFuture.result_async()`: no pytrio release has this method",
        ),
        # The way to wait that exists where the code runs: `await` inside `async def`...
        Invalid(
            "import pytrio as trio\n"
            "async def step(training: trio.TrainingClient, data):\n"
            "    fut = training.forward_backward(data, 'cross_entropy')\n"
            "    return await fut.result_async()\n",
            line=4,
            message_contains="; use `await fut` (an `APIFuture` is awaitable)",
        ),
        # ... and `.result()` in sync code.
        Invalid(
            "import pytrio as trio\n"
            "def step(training: trio.TrainingClient, data):\n"
            "    fut = training.forward_backward(data, 'cross_entropy')\n"
            "    return fut.result_async()\n",
            line=4,
            message_contains="; use `fut.result()`",
        ),
        Invalid(
            "import pytrio as trio\n"
            "def generate(sampler: trio.SamplingClient, prompt, params):\n"
            "    return sampler.sample(prompt, sampling_params=params).result().text\n",
            message_contains="sequences",
        ),
        Invalid(
            "import pytrio as trio\nparams = trio.GenerationConfig(max_tokens=8)\n",
        ),
        Invalid("from pytrio.types import SampleOutput\n", message_contains="SampleSequence"),
        Invalid(
            "import pytrio as trio\n"
            "def logprobs(train: trio.TrainingClient, batch):\n"
            "    out = train.forward_backward(batch, 'cross_entropy').result()\n"
            "    return out.loss_fn_outputs[0]['logprobs'].to_torch()\n",
            line=4,
            message_contains="use `torch.from_numpy(out.loss_fn_outputs[0]['logprobs'].to_numpy())`",
        ),
        Invalid(
            "import pytrio as trio\n"
            "def weights(datum: trio.Datum):\n"
            "    return datum.loss_fn_inputs['weights'].to_list()\n",
            message_contains="did you mean `tolist`?",
        ),
    )
    reach = limited(
        "config-dict",
        **{
            "dict-entry-get:valid": "the route reads the value with `.get()` where the example's shape needs the name itself"
        },
    )

    @classmethod
    def report_issue(
        cls, checker: conformance.ConformanceChecker, issue: conformance.Issue, node: ast.AST
    ) -> None:
        found = api_data().symbol(issue.symbol, issue.target)
        receiver = _instance_receiver(checker.ctx, issue)
        names = conformance.member_names(issue)
        if isinstance(found, Class):
            # A classmethod with another verb is not the near miss of a missing method:
            # `from_torch(tensor)` builds a new object, it is not what `to_torch()` meant.
            verb = issue.name.split("_", 1)[0]
            names = [
                n
                for n in names
                if n not in found.methods
                or not found.methods[n].binding
                or n.split("_", 1)[0] == verb
            ]
        close = difflib.get_close_matches(issue.name, names, n=1, cutoff=0.5)
        fields = [n for n in names if n in ("metrics", "sequences")]
        conversion = _conversion_hint(issue, found, receiver, node)
        hint = ""
        if conversion:
            hint = conversion
        elif close and close[0] == "result" and _on_api_future(checker, issue):
            hint = _wait_hint(issue, in_async=checker.ctx.in_async_function)
        elif fields:  # results hold their data under these two
            hint = f"; it has {', '.join(f'`{n}`' for n in fields)}"
        elif close:
            hint = f"; did you mean `{close[0]}`?"
        checker.report(
            issue.node,
            cls.message.format(
                what=conformance.describe(issue),
                consequence=conformance.consequence(issue),
                hint=hint,
            ),
            code=cls.code,
        )


def _on_api_future(checker: conformance.ConformanceChecker, issue: conformance.Issue) -> bool:
    node = issue.node
    if not isinstance(node, ast.Attribute):
        return False
    typ = checker.model.type_of(node.value, pytrio_only=True)
    return typ is not None and typ.kind is Kind.API_FUTURE


def _wait_hint(issue: conformance.Issue, *, in_async: bool) -> str:
    """A misnamed wait on an `APIFuture` (`fut.result_async()`): the way that exists where the
    code runs. Every pytrio release's `APIFuture` has `__await__`, so inside `async def` the
    future itself is awaited; sync code calls `.result()`."""
    assert isinstance(issue.node, ast.Attribute)
    text = ast.unparse(issue.node.value)
    receiver = text if len(text) <= 40 and "\n" not in text else None
    if in_async:
        wait = f"`await {receiver}`" if receiver else "`await` the future"
        return f"; use {wait} (an `APIFuture` is awaitable)"
    wait = f"`{receiver}.result()`" if receiver else "`.result()` on the future"
    return f"; use {wait}"


def _instance_receiver(ctx: LintContext, issue: conformance.Issue) -> str | None:
    """The source of the instance a missing method or attribute was asked of (`td` in
    `td.to_torch()`); None when it was asked of the class or module itself."""
    node = issue.node
    if issue.what not in ("method", "attribute") or not isinstance(node, ast.Attribute):
        return None
    if ctx.model.qualified_name(node.value, pytrio_only=True) is not None:
        return None
    return _short(node.value)


def _conversion_hint(
    issue: conformance.Issue, found: Symbol | None, receiver: str | None, node: ast.AST
) -> str:
    """`x.to_torch()` on a class that has only the constructor `from_torch(tensor)`: say which
    instance method converts (the one returning a NumPy array) and how to get the library's array
    from it. Empty when the class has no such pair."""
    if not isinstance(found, Class) or not issue.name.startswith("to_"):
        return ""
    library = issue.name.removeprefix("to_")
    builder = found.methods.get(f"from_{library}")
    if builder is None or not builder.binding:
        return ""
    if receiver is None:  # `TensorData.to_torch(td)`: the instance is the first argument
        call_args = node.args if isinstance(node, ast.Call) and node.func is issue.node else []
        receiver = _short(call_args[0]) if call_args else "x"
    to_array = next(
        (
            name
            for name, method in sorted(found.methods.items())
            if not method.binding
            and not method.params
            and (method.returns or "").rsplit(".", 1)[-1] == "ndarray"
        ),
        None,
    )
    head = (
        f"; `{issue.owner}.from_{library}()` is a {builder.binding} that builds a new "
        f"`{issue.owner}` from {library} data, not a conversion back"
    )
    if to_array is None:
        return head
    back = f"{receiver}.{to_array}()"
    wrap = _FROM_NUMPY.get(library)
    return f"{head}; use `{wrap}({back})`" if wrap else f"{head}; `{back}` gives a NumPy array"


def _short(expr: ast.expr) -> str:
    text = ast.unparse(expr)
    return text if len(text) <= 40 and "\n" not in text else "x"
