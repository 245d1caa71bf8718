"""PTR312 image-chunk-expected-tokens: an `ImageChunk` without `expected_tokens` where the SDK
must count the input's tokens."""

from __future__ import annotations

import ast

from trio_lint.output.diagnostics import Severity
from trio_lint.rules._common import argument, keyword
from trio_lint.rules.base import Invalid, LooksAt, Rule, Valid, limited


def _unsized(model, chunk: ast.AST) -> bool:
    """`ImageChunk(data=..., format=...)` with no `expected_tokens` (or `expected_tokens=None`)
    and no `**kwargs` that might carry it."""
    if not (isinstance(chunk, ast.Call) and model.is_sdk(chunk.func, "ImageChunk")):
        return False
    if any(kw.arg is None for kw in chunk.keywords):
        return False
    given = keyword(chunk, "expected_tokens")
    return given is None or (isinstance(given.value, ast.Constant) and given.value.value is None)


def _image_chunks(model, value: ast.expr) -> tuple[list[ast.Call], bool]:
    """The unsized image chunks of the `ModelInput(chunks=...)` values `value` is built from, and
    whether there may be several (two calls, or one in a comprehension)."""
    found: list[ast.Call] = []
    many = False
    for built in model.origins(value, 40):
        if not (isinstance(built, ast.Call) and model.is_sdk(built.func, "ModelInput")):
            continue
        chunks = argument(built, 0, "chunks")
        if chunks is None:
            continue
        for origin in model.origins(chunks, 80):
            if _unsized(model, origin) and origin not in found:
                found.append(origin)
            elif isinstance(origin, ast.ListComp | ast.GeneratorExp) and any(
                _unsized(model, node) for node in ast.walk(origin.elt)
            ):
                many = True
    return found, many or len(found) > 1


class ImageChunkExpectedTokens(Rule):
    code = "PTR312"
    name = "image-chunk-expected-tokens"
    looks_at = LooksAt(
        calls=frozenset({"len"}), sdk_calls=frozenset({"Datum"}), attributes=frozenset({"length"})
    )
    message = (
        "`ImageChunk` without `expected_tokens`: {use} raises `ValueError` on pytrio 0.2.9; pass "
        "`expected_tokens=` (the number of tokens the image takes in the model's input)"
    )
    severity = Severity.ERROR
    # Facts of PyTRIO's own SDK (not Tinker's): see the doc's References.
    pytrio_only = True
    min_sdk = "0.2"
    doc = """
## What it does
Flags an `ImageChunk(...)` built without `expected_tokens` when the SDK has to count the tokens
of the `ModelInput` it is in: the input's length is read (`len(model_input)`,
`model_input.length`), or it goes into a `Datum` with another image chunk that lacks it too (two
such chunks, or one built in a comprehension). The chunk may be built in place, in a list of
chunks, or by a helper of the same module.

## Why is this bad?
`ModelInput` counts an image by its `expected_tokens`; without it, `len(model_input)` and
`model_input.length` raise `ValueError: image chunks require expected_tokens to calculate model
input length`. For training data the SDK infers the count of one image chunk per input from the
length of `target_tokens`, and raises `ValueError: cannot infer expected_tokens for more than
one image chunk` for two. (Sampling needs no count: the service measures the image itself, and
`expected_tokens` is only the client's estimate.)

## Fix safety
No fix: the count depends on the model's vision encoder (for Qwen-VL processors, the image's
patches divided by `merge_size ** 2`).

## References
- pytrio 0.2.9: `pytrio.ImageChunk`, `pytrio.ModelInput.length`
"""
    evidence = """
- `ModelInput.length` and `__len__` raise without `expected_tokens`
  (`029:types/forward/model_input.py:64-84`).
- Training data: the count of one image chunk per input is inferred from `target_tokens`, two
  raise (`029:client/training_batch.py:160-185`).
- `expected_tokens` is only the client's estimate; the service recomputes from the image
  (`029:types/forward/image_chunk.py:14-15,22`).
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "def prompt(text_tokens, png):\n"
            "    image = trio.ImageChunk(data=png, format='png', expected_tokens=256)\n"
            "    model_input = trio.ModelInput(chunks=[image, trio.types.EncodedTextChunk("
            "tokens=text_tokens)])\n"
            "    return model_input, len(model_input)\n"
        ),
        # One image in a training Datum: the SDK infers its count from the targets.
        Valid(
            "import pytrio as trio\n"
            "def datum(text_tokens, png, targets):\n"
            "    model_input = trio.ModelInput(chunks=[trio.ImageChunk(data=png, format='png'),\n"
            "        trio.types.EncodedTextChunk(tokens=text_tokens)])\n"
            "    return trio.Datum(model_input=model_input,\n"
            "                      loss_fn_inputs={'target_tokens': targets})\n"
        ),
        # Sampling counts nothing on the client.
        Valid(
            "import pytrio as trio\n"
            "def ask(sampler: trio.SamplingClient, text_tokens, png, params):\n"
            "    prompt = trio.ModelInput(chunks=[trio.ImageChunk(data=png, format='png'),\n"
            "        trio.types.EncodedTextChunk(tokens=text_tokens)])\n"
            "    return sampler.sample(prompt=prompt, num_samples=1, sampling_params=params)\n"
        ),
        # 0.1 had no image chunks (PTR003 reports the name there).
        Valid(
            "import pytrio as trio\n"
            "def prompt(text_tokens, png):\n"
            "    image = trio.ImageChunk(data=png, format='png')\n"
            "    return len(trio.ModelInput(chunks=[image]))\n",
            config={"target-version": "0.1"},
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "def prompt(text_tokens, png):\n"
            "    image = trio.ImageChunk(data=png, format='png')\n"
            "    model_input = trio.ModelInput(chunks=[image, trio.types.EncodedTextChunk("
            "tokens=text_tokens)])\n"
            "    return model_input, len(model_input)\n",
            line=3,
            message_contains="len(model_input)",
        ),
        Invalid(
            "import pytrio as trio\n"
            "def encode_image(png):\n"
            "    return trio.ImageChunk(data=png, format='png')\n"
            "def build(tokens, png):\n"
            "    chunks = [encode_image(png), trio.types.EncodedTextChunk(tokens=tokens)]\n"
            "    prompt_length = trio.ModelInput(chunks=chunks).length\n"
            "    return prompt_length\n",
            line=3,
        ),
        Invalid(
            "import pytrio as trio\n"
            "def datum(tokens, pngs, targets):\n"
            "    chunks = [trio.ImageChunk(data=p, format='png') for p in pngs]\n"
            "    model_input = trio.ModelInput(chunks=[*chunks, trio.types.EncodedTextChunk("
            "tokens=tokens)])\n"
            "    return trio.Datum(model_input=model_input,\n"
            "                      loss_fn_inputs={'target_tokens': targets})\n",
            line=3,
            message_contains="more than one image chunk",
        ),
    )
    reach = limited(
        "config-dict",
        "call-site-parameter",
        "call-site-method-parameter",
        "loop-variable",
        "dict-entry-get",
        "annotated-parameter",
        "nested-coroutine-parameter",
        "queue-worker",
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._reported: set[int] = set()
        # `len(...)` is everywhere and image chunks are rare: a unit that never names the class
        # has none (one substring test per unit instead of a walk back from every `len`).
        self._images = "ImageChunk" in ctx.source

    def _flag(self, chunks: list[ast.Call], use: str) -> None:
        for chunk in chunks:
            if id(chunk) not in self._reported:
                self._reported.add(id(chunk))
                self.report(chunk, self.message.format(use=use))

    def visit_Call(self, node: ast.Call) -> None:
        if not self._images:
            return
        func = node.func
        if isinstance(func, ast.Name) and func.id == "len":
            if (
                len(node.args) == 1
                and not node.keywords
                and self.model.qualified_name(func) is None
            ):
                chunks, _ = _image_chunks(self.model, node.args[0])
                self._flag(chunks, f"`{ast.unparse(node)}`")
            return
        if self.model.is_sdk(func, "Datum"):
            model_input = argument(node, 0, "model_input")
            if model_input is None:
                return
            chunks, many = _image_chunks(self.model, model_input)
            if many:
                self._flag(
                    chunks,
                    "training on a `Datum` with more than one image chunk without it "
                    "(`cannot infer expected_tokens for more than one image chunk`)",
                )

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if self._images and node.attr == "length" and isinstance(node.ctx, ast.Load):
            chunks, _ = _image_chunks(self.model, node.value)
            self._flag(chunks, f"`{ast.unparse(node)}`")
