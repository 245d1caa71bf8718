"""PTR108 rest-result-as-dict: 0.1-style dict access on 0.2 RestClient results."""

from __future__ import annotations

import ast

from trio_lint.output.diagnostics import Severity
from trio_lint.rules.base import Invalid, LooksAt, Rule, SdkValues, Valid
from trio_lint.semantics.receivers import Kind

_MODELS = frozenset({Kind.REST_RESULT, Kind.CHECKPOINTS_LIST_RESPONSE, Kind.TRAINING_RUNS_RESPONSE})
# 0.1 dict keys and where the value lives on the 0.2 model.
_KEYS = {
    "total": "`.cursor.total_count`",
    "has_more": "`.cursor` (`offset + limit < total_count`)",
    "training_runs": "`.training_runs`",
    "checkpoints": "`.checkpoints`",
}


class RestResultAsDict(Rule):
    code = "PTR108"
    looks_at = LooksAt(calls=frozenset({"get"}), receivers=SdkValues(symbols=False, kinds=_MODELS))
    # `x[k]` on a plain name only when the model types `x` as a REST result (any key: a model is
    # not subscriptable, whatever the key; one bound elsewhere still names the field).
    name = "rest-result-as-dict"
    message = "{what}"
    severity = Severity.ERROR
    # Facts of PyTRIO's own SDK (not Tinker's): see the doc's References.
    pytrio_only = True
    min_sdk = "0.2"
    doc = """
## What it does
On 0.2: flags item access (`x["training_runs"]`, `x.get("checkpoints")`, `x[FIELD]`) on the
result of a RestClient call, a Pydantic model (`TrainingRunsResponse`, `CheckpointsListResponse`,
...). A key bound elsewhere (`FIELD = "checkpoints"`) is read to name the attribute.
Indexing the future itself (`.result()` missing) is PTR101's finding, with a fix.

## Why is this bad?
0.1.13's RestClient returned plain dicts. 0.2.9's sync methods
return `concurrent.futures.Future[model]`; a future cannot be
indexed (`TypeError`) and a Pydantic model has attributes, not keys. Some fields moved: 0.1's
`total`/`has_more` are `cursor.total_count` on 0.2.

## Fix safety
No fix: field names changed between the lines.

## References
- pytrio 0.2.9: `pytrio.RestClient.list_training_runs`, `pytrio.types.TrainingRunsResponse`, `pytrio.types.Cursor`
"""
    evidence = """
- (`013:lib/rest_client.py:60-73`)
- (`029:client/rest.py:86-87,151-171`)
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "rest = trio.ServiceClient().create_rest_client()\n"
            "runs = rest.list_training_runs().result().training_runs\n"
            "total = rest.list_user_checkpoints().result().cursor.total_count\n"
        ),
        Valid("import pytrio as trio\nimport requests\nruns = requests.get(u).json()['runs']\n"),
        Valid(
            "import pytrio as trio\n"
            "rest = trio.ServiceClient().create_rest_client()\n"
            "runs = rest.list_training_runs()['training_runs']\n",
            config={"target-version": "0.1"},
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "rest = trio.ServiceClient().create_rest_client()\n"
            "runs = rest.list_training_runs().result()['training_runs']\n",
            line=3,
            message_contains="Pydantic model",
        ),
        Invalid(
            "import pytrio as trio\n"
            "rest = trio.ServiceClient().create_rest_client()\n"
            "page = rest.list_user_checkpoints().result()\n"
            "print(page['total'])\n",
            message_contains="cursor.total_count",
        ),
        Invalid(
            "import pytrio as trio\n"
            "def runs(rest: trio.RestClient, run_id):\n"
            "    resp = rest.list_checkpoints(run_id).result()\n"
            "    return resp.get('checkpoints', [])\n",
        ),
        Invalid(
            "import pytrio as trio\n"
            "FIELD = 'training_runs'\n"
            "def runs(rest: trio.RestClient):\n"
            "    return rest.list_training_runs().result()[FIELD]\n",
            line=4,
            message_contains="read `.training_runs`",
        ),
    )

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if not isinstance(node.slice, ast.Slice):
            self._check(node, node.value, node.slice)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "get" and node.args:
            self._check(node, func.value, node.args[0])

    def _check(self, node: ast.expr, value: ast.expr, key: ast.expr) -> None:
        typ = self.model.type_of(value)
        if typ is None or typ.kind not in _MODELS:
            return
        # The key as written or bound elsewhere (`FIELD = "checkpoints"`) names the attribute.
        text = self.model.literal(key)
        if isinstance(text, ast.Constant) and isinstance(text.value, str):
            where = _KEYS.get(text.value, f"`.{text.value}`")
        else:
            where = "its attributes"
        what = f"`{typ.kind}` is a Pydantic model on 0.2, not a dict: read {where}"
        self.report(node, self.message.format(what=what))
