"""PTR204 raw-list-model-input: a plain list of token ids where a `ModelInput` is required."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from trio_lint.output.diagnostics import Applicability, Severity
from trio_lint.rules._common import argument, wrap_in_call
from trio_lint.rules.base import Invalid, LooksAt, Rule, Valid, edit, limited, safe_fix
from trio_lint.semantics.receivers import Kind

if TYPE_CHECKING:
    pass

_PROMPT_METHODS = ("sample", "sample_async", "compute_logprobs", "compute_logprobs_async")


def _listish(expr: ast.expr) -> bool:
    """Expressions that certainly build a list of ints (not a ModelInput)."""
    if isinstance(expr, ast.List | ast.ListComp):
        return True
    if isinstance(expr, ast.Subscript):
        if isinstance(expr.slice, ast.Slice):
            # a slice of a name, a call's result, an attribute or an item (`self.ids[:-1]`,
            # `cfg["ids"][:-1]`): a sequence
            return _listish(expr.value) or isinstance(
                expr.value, ast.Name | ast.Call | ast.Attribute | ast.Subscript
            )
        key = expr.slice
        return isinstance(key, ast.Constant) and key.value == "input_ids"
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return _listish(expr.left) or _listish(expr.right)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
        return expr.func.attr == "encode"
    return False


class RawListModelInput(Rule):
    code = "PTR204"
    name = "raw-list-model-input"
    looks_at = LooksAt(sdk_calls=frozenset({"Datum"}), calls=frozenset(_PROMPT_METHODS))
    message = (
        "`{param}` needs a `ModelInput`, not a list: wrap it as `{alias}.ModelInput.from_ints(...)`"
    )
    severity = Severity.ERROR
    fix_safety = Applicability.SAFE
    doc = """
## What it does
Flags a list of token ids passed as `Datum(model_input=...)` or as the `prompt` of
`SamplingClient.sample`/`sample_async`/`compute_logprobs`: a list literal or comprehension, a
slice, a list concatenation, `tokenizer.encode(...)`, `tokenizer(...)["input_ids"]`, or a name
bound to one of those in the same function.

## Why is this bad?
`Datum.model_input` is typed `ModelInput`, so a list raises a Pydantic `ValidationError`; a list
prompt fails later with `AttributeError: 'list' object has no attribute 'is_empty'`.

## Fix safety
Wrapping the expression in `ModelInput.from_ints(...)` is safe for the expression kinds above
(they are lists of ints). It is offered when the module has `import pytrio as <alias>`.

## References
- pytrio 0.2.9: `pytrio.Datum`, `pytrio.ModelInput.from_ints`, `pytrio.SamplingClient.sample`
"""
    evidence = """
- `Datum.model_input` is typed `ModelInput` (`029:types/forward/datum.py:18`), a pydantic model
  of chunks (`029:types/forward/model_input.py:17-36`), so a list fails validation
  (`029:types/base.py:9-15`).
- `sample` and `compute_logprobs` read `prompt.is_empty` first
  (`029:client/sampling.py:162`, `029:client/sampling.py:198-199,240`): a list raises
  AttributeError there.
- `ModelInput.from_ints(tokens: list[int])` builds one text chunk
  (`029:types/forward/model_input.py:26-36`).
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "def encode_prompt(tokenizer, question):\n"
            "    return trio.ModelInput.from_ints(tokenizer.encode(question))\n"
            "class Agent:\n"
            "    def __init__(self, tokenizer, system):\n"
            "        self.prefix = trio.ModelInput.from_ints(tokenizer.encode(system))\n"
            "    def act(self, sampler: trio.SamplingClient, tokenizer, q, sp):\n"
            "        a = sampler.sample(self.prefix, 1, sp)\n"
            "        return a, sampler.sample(encode_prompt(tokenizer, q), 1, sp)\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "datum = trio.Datum(model_input=trio.ModelInput.from_ints(ids[:-1]),\n"
            "                   loss_fn_inputs={'target_tokens': ids[1:]})\n"
        ),
        Valid(
            "import pytrio as trio\nfrom vllm import LLM\n"
            "llm = LLM('m')\nout = llm.generate(prompt_token_ids=[1, 2, 3])\n"
            "model.sample(prompt=[1, 2, 3])\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "def build(model_input, targets):\n"
            "    return trio.Datum(model_input=model_input, loss_fn_inputs={'target_tokens': targets})\n"
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "ids = tokenizer.encode(text)\n"
            "datum = trio.Datum(model_input=ids[:-1], loss_fn_inputs={'target_tokens': ids[1:]})\n",
            fixed="import pytrio as trio\n"
            "ids = tokenizer.encode(text)\n"
            "datum = trio.Datum(model_input=trio.ModelInput.from_ints(ids[:-1]), "
            "loss_fn_inputs={'target_tokens': ids[1:]})\n",
            line=3,
        ),
        Invalid(
            "import pytrio as trio\n"
            "sampler = trio.ServiceClient().create_sampling_client(base_model='m')\n"
            "prompt = tokenizer.encode('Hello')\n"
            "out = sampler.sample(prompt=prompt, sampling_params=sp).result()\n",
            fixed="import pytrio as trio\n"
            "sampler = trio.ServiceClient().create_sampling_client(base_model='m')\n"
            "prompt = tokenizer.encode('Hello')\n"
            "out = sampler.sample(prompt=trio.ModelInput.from_ints(prompt), "
            "sampling_params=sp).result()\n",
        ),
        Invalid(
            "import pytrio as trio\n"
            "def build(prompt_ids, completion_ids):\n"
            "    tokens = prompt_ids + completion_ids\n"
            "    return trio.Datum(tokens[:-1], {'target_tokens': tokens[1:]})\n",
            fixed="import pytrio as trio\n"
            "def build(prompt_ids, completion_ids):\n"
            "    tokens = prompt_ids + completion_ids\n"
            "    return trio.Datum(trio.ModelInput.from_ints(tokens[:-1]), "
            "{'target_tokens': tokens[1:]})\n",
        ),
        Invalid(
            "from pytrio import Datum\n"
            "datum = Datum(model_input=[1, 2, 3], loss_fn_inputs={'target_tokens': [2, 3, 4]})\n",
            fixed=None,
        ),
        Invalid(
            "import pytrio as trio\n"
            "def encode_prompt(tokenizer, question):\n"
            "    return tokenizer.encode(f'Q: {question}\\nA:')\n"
            "def answer(sampler: trio.SamplingClient, tokenizer, question, sp):\n"
            "    prompt = encode_prompt(tokenizer, question)\n"
            "    return sampler.sample(prompt=prompt, num_samples=1, sampling_params=sp)\n",
            fixed="import pytrio as trio\n"
            "def encode_prompt(tokenizer, question):\n"
            "    return tokenizer.encode(f'Q: {question}\\nA:')\n"
            "def answer(sampler: trio.SamplingClient, tokenizer, question, sp):\n"
            "    prompt = encode_prompt(tokenizer, question)\n"
            "    return sampler.sample(prompt=trio.ModelInput.from_ints(prompt), num_samples=1,"
            " sampling_params=sp)\n",
            line=6,
        ),
        Invalid(
            "import pytrio as trio\n"
            "class Agent:\n"
            "    def __init__(self, tokenizer, system):\n"
            "        self.prefix = tokenizer.encode(system)\n"
            "    def act(self, sampler: trio.SamplingClient, sp):\n"
            "        return sampler.sample(self.prefix, 1, sp)\n",
            fixed="import pytrio as trio\n"
            "class Agent:\n"
            "    def __init__(self, tokenizer, system):\n"
            "        self.prefix = tokenizer.encode(system)\n"
            "    def act(self, sampler: trio.SamplingClient, sp):\n"
            "        return sampler.sample(trio.ModelInput.from_ints(self.prefix), 1, sp)\n",
            line=6,
        ),
    )
    reach = limited(
        "queue-worker",
    )

    def visit_Call(self, node: ast.Call) -> None:
        if self.model.is_sdk(node.func, "Datum"):
            self._check(argument(node, 0, "model_input"), "model_input")
            return
        found = self.model.client_call(node)
        if found is not None and found[0] is Kind.SAMPLING_CLIENT and found[1] in _PROMPT_METHODS:
            self._check(argument(node, 0, "prompt"), "prompt")

    def _check(self, expr: ast.expr | None, param: str) -> None:
        if expr is None:
            return
        if not (_listish(expr) or self._bound_to_list(expr)):
            return
        alias = self.model.sdk_alias()
        fix = None
        if alias is not None:
            fix = safe_fix(
                "Wrap in `ModelInput.from_ints(...)`",
                edit(expr, "BaseExpression", wrap_in_call(f"{alias}.ModelInput.from_ints")),
            )
        self.report(expr, self.message.format(param=param, alias=alias or "trio"), fix=fix)

    def _bound_to_list(self, expr: ast.expr) -> bool:
        """A name, `self.x` or helper call whose every binding builds a list of ids (followed
        through the model: other functions' returns, other methods' `self.x = ...`)."""
        frontier = [expr]
        steps = 0
        while frontier:
            current = frontier.pop()
            steps += 1
            if steps > 16 or not isinstance(
                current, ast.Name | ast.Attribute | ast.Call | ast.Subscript
            ):
                return False
            sources = self.model.sources(current)
            if not sources:
                return False
            frontier += [source for source in sources if not _listish(source)]
        return True
