"""PTR205 sampling-params-dict: `sampling_params` given as a dict instead of `SamplingParams`."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from pytrio_facts.sdk import SAMPLING_PARAMS
from trio_lint.output.diagnostics import Applicability, Severity
from trio_lint.rules._common import argument
from trio_lint.rules.base import PYTRIO, Invalid, LooksAt, Rule, Valid, edit, limited, safe_fix
from trio_lint.semantics.receivers import Kind

if TYPE_CHECKING:
    import libcst as cst

_FIELDS = {field.name for field in SAMPLING_PARAMS}


def _dict_to_params(alias: str):
    def transform(node: cst.CSTNode) -> cst.CSTNode:
        import libcst as cst

        assert isinstance(node, cst.Dict)
        args = []
        for element in node.elements:
            assert isinstance(element, cst.DictElement) and isinstance(
                element.key, cst.SimpleString
            )
            args.append(
                cst.Arg(
                    keyword=cst.Name(str(element.key.evaluated_value)),  # offered for str keys only
                    value=element.value,
                    equal=cst.AssignEqual(
                        whitespace_before=cst.SimpleWhitespace(""),
                        whitespace_after=cst.SimpleWhitespace(""),
                    ),
                    comma=element.comma,
                )
            )
        return cst.Call(func=cst.parse_expression(f"{alias}.SamplingParams"), args=args)

    return transform


class SamplingParamsDict(Rule):
    code = "PTR205"
    sdks = PYTRIO  # its facts are PyTRIO's `SamplingParams` fields
    looks_at = LooksAt(calls=frozenset({"sample", "sample_async"}))
    name = "sampling-params-dict"
    message = (
        "`sampling_params` must be a `SamplingParams`, not a dict: `{alias}.SamplingParams(...)`"
    )
    severity = Severity.ERROR
    fix_safety = Applicability.SAFE
    doc = """
## What it does
Flags a dict literal or `dict(...)` passed as `sampling_params` to `SamplingClient.sample` or
`sample_async`.

## Why is this bad?
The sampler reads attributes of the object, so a dict fails with `AttributeError` before
anything is sampled. On 0.2.9 the first attribute read is `max_tokens` (`'dict' object has no
attribute 'max_tokens'`); on 0.1.13 it is `ignore_eos` (`'dict' object has no attribute
'ignore_eos'`).

## Fix safety
Safe when every key is a string literal naming a `SamplingParams` field: the same values reach
the same fields. Otherwise no fix (an unknown key would fail either way; PTR203 explains it).

## References
- pytrio 0.2.9: `pytrio.SamplingClient.sample`, `pytrio.SamplingParams`
"""
    evidence = """
- 0.2.9: `sample` hands `sampling_params` unchanged through `_sample` to `_submit_sample`
  (`029:client/sampling.py:80-90,140-148`), whose first use of it is
  `sampling_params.max_tokens`, before the request is built (`029:client/sampling.py:168`).
- 0.1.13: `sample` runs `sample_async` (`013:lib/sampling_client.py:45-53`), whose first use of
  `sampling_params` is `sampling_params.ignore_eos` (`013:lib/sampling_client.py:97`), then
  `max_tokens`, then `model_dump()` (`013:lib/sampling_client.py:104`); so a dict's
  AttributeError names `ignore_eos` there.
- The fields the fix may use: `029:types/sample/sampling_params.py:20-35`.
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "SETTINGS = {'max_tokens': 64, 'temperature': 0.7}\n"
            "def params():\n    return trio.SamplingParams(**SETTINGS)\n"
            "class Gen:\n    opts = trio.SamplingParams(max_tokens=8)\n"
            "    def run(self, sampler: trio.SamplingClient, p):\n"
            "        a = sampler.sample(p, 1, params())\n"
            "        return a, sampler.sample(p, 1, self.opts)\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "def go(sampler: trio.SamplingClient, p, settings):\n"
            "    settings = trio.SamplingParams(**settings)\n"
            "    return sampler.sample(p, 1, settings)\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "sampler = trio.ServiceClient().create_sampling_client(base_model='m')\n"
            "sampler.sample(prompt=p, sampling_params=trio.SamplingParams(max_tokens=8))\n"
        ),
        Valid(
            "import pytrio as trio\nfrom vllm import LLM\n"
            "llm = LLM('m')\nllm.generate(prompts, sampling_params={'max_tokens': 8})\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "def go(sampler: trio.SamplingClient, p, params: trio.SamplingParams):\n"
            "    return sampler.sample(p, 1, params).result()\n"
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "sampler = trio.ServiceClient().create_sampling_client(base_model='m')\n"
            "out = sampler.sample(prompt=p, sampling_params={'max_tokens': 64, 'temperature': 0.7})\n",
            fixed="import pytrio as trio\n"
            "sampler = trio.ServiceClient().create_sampling_client(base_model='m')\n"
            "out = sampler.sample(prompt=p, "
            "sampling_params=trio.SamplingParams(max_tokens=64, temperature=0.7))\n",
            line=3,
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def go(sampler: trio.SamplingClient, p):\n"
            "    return await sampler.sample_async(p, 4, dict(max_tokens=16))\n",
        ),
        Invalid(
            "import pytrio as trio\n"
            "sampler = trio.ServiceClient().create_sampling_client(base_model='m')\n"
            "out = sampler.sample(prompt=p, sampling_params={'max_new_tokens': 64})\n",
            fixed=None,
        ),
        Invalid(
            "import pytrio as trio\n"
            "def sampling_settings():\n    return {'max_tokens': 64, 'temperature': 0.7}\n"
            "def go(sampler: trio.SamplingClient, p):\n"
            "    return sampler.sample(p, 1, sampling_settings())\n",
            line=5,
            message_contains="holds a dict",
            fixed=None,
        ),
        Invalid(
            "import pytrio as trio\n"
            "class Evaluator:\n    SAMPLING = dict(max_tokens=32, temperature=0.0)\n"
            "    def run(self, sampler: trio.SamplingClient, p):\n"
            "        return sampler.sample(p, 1, sampling_params=self.SAMPLING)\n",
            line=5,
            fixed=None,
        ),
        Invalid(
            "import pytrio as trio\nfrom dataclasses import dataclass, field\n"
            "@dataclass\nclass Config:\n"
            "    sampling: dict = field(default_factory=lambda: {'max_tokens': 128})\n"
            "def go(sampler: trio.SamplingClient, p, cfg: Config):\n"
            "    return sampler.sample(p, 1, sampling_params=cfg.sampling)\n",
            line=7,
            fixed=None,
        ),
        # The receiver is unknown, but the call's name and keywords are SamplingClient.sample's.
        Invalid(
            "import pytrio as trio\n"
            "class Server:\n"
            "    def __init__(self, engine):\n"
            "        self.engine = engine\n"
            "    def reply(self, prompt):\n"
            "        return self.engine.sample(prompt=prompt, num_samples=1,\n"
            "                                  sampling_params={'max_tokens': 64})\n",
            fixed="import pytrio as trio\n"
            "class Server:\n"
            "    def __init__(self, engine):\n"
            "        self.engine = engine\n"
            "    def reply(self, prompt):\n"
            "        return self.engine.sample(prompt=prompt, num_samples=1,\n"
            "                                  sampling_params=trio.SamplingParams(max_tokens=64))\n",
            line=7,
        ),
    )
    reach = limited(
        "queue-worker",
    )

    def visit_Call(self, node: ast.Call) -> None:
        found = self.model.client_call(node, methods=("sample", "sample_async"))
        if found is None or found[0] is not Kind.SAMPLING_CLIENT:
            return
        if found[1] not in ("sample", "sample_async"):
            return
        value = argument(node, 2, "sampling_params")
        if value is None:
            return
        is_dict_call = (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id == "dict"
        )
        alias = self.model.sdk_alias()
        if not isinstance(value, ast.Dict) and not is_dict_call:
            # A dict bound elsewhere: a name, a helper's return, a class attribute, a config field.
            if self.model.dict_entries(value) is not None:
                self.report(
                    value,
                    f"`{ast.unparse(value)}` holds a dict: "
                    + self.message.format(alias=alias or "trio"),
                )
            return
        fix = None
        if (
            isinstance(value, ast.Dict)
            and alias is not None
            and all(
                isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value in _FIELDS
                for k in value.keys
            )
        ):
            fix = safe_fix("Build a `SamplingParams`", edit(value, "Dict", _dict_to_params(alias)))
        self.report(value, self.message.format(alias=alias or "trio"), fix=fix)
