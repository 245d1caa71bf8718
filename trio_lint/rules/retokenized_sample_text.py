"""PTR310 retokenized-sample-text: training tokens re-encoded from `sequence.text` instead of
taken from `sequence.tokens`."""

from __future__ import annotations

import ast

from trio_lint.output.diagnostics import Severity
from trio_lint.rules._common import argument
from trio_lint.rules.base import Invalid, LooksAt, Rule, Valid, limited
from trio_lint.semantics.receivers import Kind

_ENCODERS = frozenset({"encode", "encode_plus", "__call__"})


class RetokenizedSampleText(Rule):
    code = "PTR310"
    name = "retokenized-sample-text"
    looks_at = LooksAt(
        sdk_calls=frozenset({"Datum"}), calls=_ENCODERS, keys=frozenset({"input_ids"})
    )
    # The encoders' calls are collected too: a unit where none of them encodes a sampled text
    # (most units) cannot hold a finding, which settles it without tracing any Datum's tokens.
    message = (
        "training tokens re-encoded from a sampled sequence's `.text`: use its `.tokens` "
        "(re-encoding can split the text differently, so the tokens no longer match the sampled "
        "logprobs)"
    )
    severity = Severity.WARNING
    doc = """
## What it does
Flags a `Datum` whose input tokens or `target_tokens` come from `tokenizer.encode(...)` (or
`tokenizer(...)["input_ids"]`) of a sampled sequence's `.text` (`out.sequences[i].text`, or a
`seq.text` while iterating over `out.sequences`), also through names, list concatenation and the
parameters of a helper that builds the `Datum`.

## Why is this bad?
The sampler returns the tokens it generated in `sequence.tokens`, with one logprob per token in
`sequence.logprobs`. Decoding to text and encoding again does not give the same tokens back in
general (merges at the prompt boundary, whitespace, special tokens), so the training data no
longer lines up with the sampled logprobs: importance weights and advantages land on the wrong
tokens, and RL training is biased without any error.

## Fix safety
No fix: the prompt tokens and the sampled tokens have to be joined as token lists.

## References
- pytrio 0.2.9: `pytrio.types.SampleSequence`, `pytrio.Datum`
"""
    evidence = """
- `SampleSequence` has `tokens: list[int]`, `text` and one logprob per token in `logprobs`
  (`029:types/sample/sample_sequence.py:6-26`); 0.1.13 has `tokens` too
  (`013:types/sample/sample_sequence.py:4-15`).
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "def rollout(sampler: trio.SamplingClient, prompt_ids, sp):\n"
            "    out = sampler.sample(trio.ModelInput.from_ints(prompt_ids), sampling_params=sp).result()\n"
            "    seq = out.sequences[0]\n"
            "    tokens = prompt_ids + seq.tokens\n"
            "    return trio.Datum(model_input=trio.ModelInput.from_ints(tokens[:-1]),\n"
            "                      loss_fn_inputs={'target_tokens': tokens[1:]})\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "def judge(sampler: trio.SamplingClient, tok, p, sp):\n"
            "    out = sampler.sample(p, sampling_params=sp).result()\n"
            "    answer = out.sequences[0].text\n"
            "    print(len(tok.encode(answer)), answer.strip())\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "def sft(tok, rows):\n"
            "    for row in rows:\n"
            "        ids = tok.encode(row.text)\n"
            "        yield trio.Datum(model_input=trio.ModelInput.from_ints(ids[:-1]),\n"
            "                         loss_fn_inputs={'target_tokens': ids[1:]})\n"
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "def rollout(sampler: trio.SamplingClient, tok, prompt_ids, sp):\n"
            "    out = sampler.sample(trio.ModelInput.from_ints(prompt_ids), sampling_params=sp).result()\n"
            "    seq = out.sequences[0]\n"
            "    tokens = prompt_ids + tok.encode(seq.text, add_special_tokens=False)\n"
            "    return trio.Datum(model_input=trio.ModelInput.from_ints(tokens[:-1]),\n"
            "                      loss_fn_inputs={'target_tokens': tokens[1:]})\n",
            line=5,
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def rollouts(sampler: trio.SamplingClient, tok, p, sp):\n"
            "    out = await sampler.sample_async(p, num_samples=4, sampling_params=sp)\n"
            "    batch = []\n"
            "    for seq in out.sequences:\n"
            "        ids = tok(prompt_text + seq.text)['input_ids']\n"
            "        batch.append(trio.Datum(model_input=trio.ModelInput.from_ints(ids[:-1]),\n"
            "                                loss_fn_inputs={'target_tokens': ids[1:]}))\n"
            "    return batch\n",
            line=6,
        ),
        Invalid(
            "import pytrio as trio\n"
            "def rollout(sampler: trio.SamplingClient, tokenizer, p, sp, adv):\n"
            "    text = sampler.sample(p, sampling_params=sp).result().sequences[0].text\n"
            "    ids = tokenizer.encode(text)\n"
            "    inputs = dict(target_tokens=ids[1:], logprobs=lp, advantages=adv)\n"
            "    return trio.Datum(model_input=trio.ModelInput.from_ints(ids[:-1]),\n"
            "                      loss_fn_inputs=inputs)\n",
            line=4,
            count=1,
        ),
        Invalid(
            "import pytrio as trio\n"
            "def to_datum(prompt_tokens, completion_tokens):\n"
            "    tokens = prompt_tokens + completion_tokens\n"
            "    return trio.Datum(model_input=trio.ModelInput.from_ints(tokens[:-1]),\n"
            "                      loss_fn_inputs={'target_tokens': tokens[1:]})\n"
            "def collect(sampler: trio.SamplingClient, tok, prompt_tokens, sp):\n"
            "    out = sampler.sample(trio.ModelInput.from_ints(prompt_tokens), sampling_params=sp).result()\n"
            "    for sequence in out.sequences:\n"
            "        completion = tok.encode(sequence.text, add_special_tokens=False)\n"
            "        yield to_datum(prompt_tokens=prompt_tokens, completion_tokens=completion)\n",
            line=9,
        ),
    )
    reach = limited(
        "init-attribute",
        "call-site-parameter",
        "call-site-method-parameter",
        "config-dict",
        "loop-variable",
        "in-method",
        "dict-entry-get",
        "annotated-parameter",
        "nested-coroutine-parameter",
        "queue-worker",
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._reported: set[int] = set()
        # Datums wait for `finish`: a helper's parameters are traced to the module's calls of it.
        self._datums: list[tuple[ast.Call, ast.AST | None]] = []
        self._encoders: list[ast.expr] = []  # every node `_encoded_text` accepts
        self._sample_encoders: set[int] = set()  # ids of those that encode a sampled `.text`

    def visit_Call(self, node: ast.Call) -> None:
        if self.model.is_sdk(node.func, "Datum"):
            function = self.ctx.function_stack[-1] if self.ctx.function_stack else None
            self._datums.append((node, function))
        elif _encoded_text(node) is not None:
            self._encoders.append(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if _encoded_text(node) is not None:
            self._encoders.append(node)

    def finish(self) -> None:
        if not self._datums:
            return
        # A finding's origin is one of the encoders (origins are nodes of this unit): settle
        # which encode a sampled text once, then a Datum's origins are only looked up.
        self._sample_encoders = {id(e) for e in self._encoders if self._encodes_sample_text(e)}
        if self._sample_encoders:
            for node, function in self._datums:
                self._check(node, function)

    def _arguments_for(self, name: ast.Name, function: ast.AST | None) -> list[ast.expr]:
        """What the module's calls of `function` pass for its parameter `name` (one level)."""
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            return []
        params = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
        if name.id not in params and name.id not in [a.arg for a in function.args.kwonlyargs]:
            return []
        found = []
        for call in self.model.calls_of(function.name):
            given = next((kw.value for kw in call.keywords if kw.arg == name.id), None)
            if given is None and name.id in params and params.index(name.id) < len(call.args):
                given = call.args[params.index(name.id)]
            if given is not None:
                found.append(given)
        return found

    def _check(self, node: ast.Call, function: ast.AST | None) -> None:
        token_lists: list[ast.expr] = []
        model_input = argument(node, 0, "model_input")
        if isinstance(model_input, ast.Call) and model_input.args:
            token_lists.append(model_input.args[0])  # ModelInput.from_ints(tokens)
        entries = self.model.dict_entries(argument(node, 1, "loss_fn_inputs")) or {}
        if "target_tokens" in entries:
            token_lists.append(entries["target_tokens"])
        for tokens in token_lists:
            origins = self.model.origins(tokens)
            for name in [o for o in origins if isinstance(o, ast.Name)]:
                for given in self._arguments_for(name, function):
                    origins += self.model.origins(given)
            for origin in origins:
                if id(origin) in self._sample_encoders and id(origin) not in self._reported:
                    self._reported.add(id(origin))
                    self.report(origin)

    def _encodes_sample_text(self, expr: ast.expr) -> bool:
        encoded = _encoded_text(expr)
        return encoded is not None and any(
            self._is_sample_text(part) for part in self.model.origins(encoded)
        )

    def _is_sample_text(self, expr: ast.expr) -> bool:
        if not (isinstance(expr, ast.Attribute) and expr.attr == "text"):
            return False
        typ = self.model.type_of(expr.value)
        return typ is not None and typ.kind is Kind.SAMPLE_SEQUENCE


def _encoded_text(expr: ast.expr) -> ast.expr | None:
    """The text argument of `tok.encode(text, ...)` or `tok(text, ...)["input_ids"]`."""
    if (
        isinstance(expr, ast.Subscript)
        and isinstance(expr.slice, ast.Constant)
        and expr.slice.value == "input_ids"
    ):
        expr = expr.value
        if isinstance(expr, ast.Call) and expr.args:
            return expr.args[0]
        return None
    if (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr in _ENCODERS
        and expr.args
    ):
        return expr.args[0]
    return None
