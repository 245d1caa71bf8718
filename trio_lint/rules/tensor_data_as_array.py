"""PTR311 tensor-data-as-array: a `TensorData` (a result's `loss_fn_outputs[i][key]`, a Datum's
`loss_fn_inputs[key]`) handed to numpy, torch or a builtin as if it were an array or a list."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from trio_lint.output.diagnostics import Applicability, Severity
from trio_lint.rules.base import (
    Fix,
    Invalid,
    LooksAt,
    NodeEdit,
    Rule,
    Valid,
    edit,
    limited,
    unsafe_fix,
)
from trio_lint.semantics.names import dotted_name
from trio_lint.semantics.receivers import Kind

if TYPE_CHECKING:
    import libcst as cst

_NUMPY = frozenset({"np", "numpy"})
# What each call does with a TensorData (pytrio 0.2.9, numpy 2, torch 2.x; observed).
_NUMPY_ARRAYS = frozenset({"asarray", "array", "asanyarray", "ascontiguousarray"})
_NUMPY_JOINS = frozenset({"concatenate", "stack", "vstack", "hstack"})
_TORCH_TENSORS = frozenset({"tensor", "as_tensor", "Tensor", "FloatTensor", "LongTensor"})
_TORCH_JOINS = frozenset({"cat", "stack"})
_FIELD_PAIRS = frozenset({"list", "tuple", "sorted", "min", "max"})
_SCALARS = frozenset({"float", "int"})
_CONVERSIONS = frozenset(
    {
        *(f"{module}.{name}" for module in _NUMPY for name in _NUMPY_ARRAYS),
        *(f"torch.{name}" for name in (*_TORCH_TENSORS, "from_numpy")),
        *_FIELD_PAIRS,
        *_SCALARS,
        "sum",
    }
)
# Nodes a fix can append `.to_numpy()` to without parentheses (libcst has the same class names).
_WRAPPABLE = (ast.Name, ast.Attribute, ast.Subscript, ast.Call)


def _to_numpy(node: cst.CSTNode) -> cst.CSTNode:
    import libcst as cst

    return cst.Call(func=cst.Attribute(value=node, attr=cst.Name("to_numpy")))  # type: ignore[arg-type]  # the fix's node is an expression


def _call_to_numpy(node: cst.CSTNode) -> cst.CSTNode:
    """`np.asarray(td)` -> `td.to_numpy()` (a fresh C-contiguous array, what the call would give
    for the array the TensorData holds)."""
    import libcst as cst

    assert isinstance(node, cst.Call)
    return _to_numpy(node.args[0].value)


def _short(expr: ast.expr) -> str:
    text = ast.unparse(expr)
    return text if len(text) <= 40 else text[:37] + "..."


class TensorDataAsArray(Rule):
    code = "PTR311"
    name = "tensor-data-as-array"
    looks_at = LooksAt(
        calls=frozenset(
            {*(name.rsplit(".", 1)[-1] for name in _CONVERSIONS), *_NUMPY_JOINS, *_TORCH_JOINS}
        )
    )
    message = (
        "`{expr}` is a pytrio `TensorData`, not an array or a list: {effect}; "
        "convert it with `.to_numpy()` (or `.tolist()` for a flat list)"
    )
    severity = Severity.ERROR
    fix_safety = Applicability.UNSAFE
    pytrio_only = True
    min_sdk = "0.2"
    doc = """
## What it does
Flags a `TensorData` (a value of `result.loss_fn_outputs[i]` or of `datum.loss_fn_inputs`) used
as an array or a list: given to a numpy or torch array constructor or to `list`, `sum`, `float`
and similar builtins, joined by `np.concatenate` or `torch.cat`, or indexed.

The calls: `np.asarray`, `np.array`, `np.asanyarray`, `np.ascontiguousarray`, `torch.tensor`,
`torch.as_tensor`, `torch.Tensor`, `torch.FloatTensor`, `torch.LongTensor`, `torch.from_numpy`,
`list`, `tuple`, `sorted`, `min`, `max`, `sum`, `float`, `int`; the joins `np.concatenate`,
`np.stack`, `np.vstack`, `np.hstack`, `torch.cat`, `torch.stack`; indexing `td[0]`, `td[1:]`.
The values it knows to be `TensorData` are those the SDK made: `result.loss_fn_outputs[i][key]`
of a `forward`/`forward_backward` result (also through a loop over `result.loss_fn_outputs`, or
`zip`/`enumerate` of it) and `datum.loss_fn_inputs[key]` of a `Datum` (also in a loop over a
list of Datums, or an item of one, including a list started empty and filled only with Datums by
`.append`, `.extend` or `+=`). Both dicts give `TensorData` through `.get(key)` (no default, or
`None`), `.values()` and the value of `.items()` as well. A dict or array your code built before
passing it to `Datum` is not flagged.

## Why is this bad?
`TensorData` is a pydantic model (`data`, `dtype`, `shape`), not an array: the SDK converts every
`loss_fn_inputs` value (list, numpy array, torch tensor) to one when the `Datum` is built, and
every value of `loss_fn_outputs[i]` is one. numpy wraps it in a zero-dimensional `object` array
(`np.concatenate` of those raises `ValueError: zero-dimensional arrays cannot be concatenated`,
`.sum()` gives back the `TensorData`, `* 2` raises `TypeError`; `np.stack` gives an `object`
array); the torch constructors and joins raise (`torch.tensor`: `RuntimeError: Could not infer
dtype of TensorData`, the others `TypeError`);
iterating it yields its field pairs `('data', [...])`, `('dtype', ...)`, `('shape', [...])`, so
`list`/`tuple`/`sorted`/`min`/`max` give those silently and `sum` raises `TypeError`; `float`
and `int` raise `TypeError`, and so does indexing (`'TensorData' object is not subscriptable`). `len(td)` does work (the number of values).
`td.to_numpy()` gives the numpy array with the declared dtype (`float32` or `int64`) and shape,
`td.tolist()` the flat list of values.

## Fix safety
An unsafe fix: a numpy conversion of a `TensorData` becomes `td.to_numpy()` (with other arguments,
`np.asarray(td.to_numpy(), ...)`), a torch constructor gets `td.to_numpy()` as its argument, and
each `TensorData` joined by `np.concatenate`/`np.stack`/`np.vstack`/`np.hstack` gets
`.to_numpy()`. The result is the array the `TensorData` holds, `float32` or `int64` where a list
of Python floats would have given `float64`. `list`, `sum`, `float`, indexing and the torch
joins get no fix: whether a flat list (`tolist()`) or an array is meant is the author's call.

## References
- pytrio 0.2.9: `pytrio.types.TensorData` (`to_numpy`, `tolist`)
- pytrio 0.2.9: `pytrio.Datum` (`loss_fn_inputs`)
- pytrio 0.2.9: `pytrio.types.ForwardBackwardOutput` (`loss_fn_outputs`)
"""
    evidence = """
- `class TensorData(BaseModel)` with `data`, `dtype`, `shape` (`029:types/forward/tensor_data.py:14-29`),
  `to_numpy()`, `tolist()`, `__len__` (`029:types/forward/tensor_data.py:133,182,190`); no
  `__array__`, `__getitem__` or `to_torch`; 0.2.0 the same (`020:types/forward/tensor_data.py:106,142`;
  0.1.12-0.2.9 all have `to_numpy` and `tolist`: `pytrio_facts/api_versions.json`).
  `Datum.loss_fn_inputs: dict[str, TensorData]`, `convert_tensordata` runs
  `TensorData.model_validate` on every value (`029:types/forward/datum.py:21-42`; 0.1.x typed it
  `TensorData | Any`, `013:types/forward/datum.py:14`: min_sdk 0.2).
  `LossFnOutput = dict[str, TensorData]` (`029:types/forward/loss_fn_output.py:5`); every output
  is built with `TensorData.from_numpy` (`029:client/adapters/training.py:65`).
- Observed on the installed 0.2.9 with numpy/torch 2.13: `np.asarray(td)` -> shape (), dtype
  object; `np.asarray(td, dtype=np.float32)` TypeError; `np.concatenate([np.asarray(td)])`
  ValueError zero-dimensional; `np.asarray(td).sum()` returns the TensorData; `* 2` TypeError;
  `np.stack`/`vstack`/`hstack` object arrays; `torch.tensor`/`as_tensor` RuntimeError "Could not
  infer dtype of TensorData"; `torch.Tensor`/`FloatTensor`/`LongTensor` TypeError;
  `torch.from_numpy`, `torch.cat`, `torch.stack` TypeError; `list`/`tuple`/`sorted` -> field
  pairs, `min`/`max` -> a field pair, `sum`/`float`/`int`/`abs`/`round` TypeError, `bool(td)`
  True, `td[0]` TypeError,
  `len(td)` == len(td.data). `Datum.loss_fn_inputs` and each `loss_fn_outputs[i]` are plain
  `dict`s: `.get(key)`, `.values()` and `.items()` give the same `TensorData` objects (observed on
  a list filled with `data.append(trio.Datum(...))`: `np.asarray(data[0].loss_fn_inputs[k])` has
  shape () and dtype object).
- Real code: two public SFT scripts compute the eval loss with
  `np.concatenate([np.asarray(x["logprobs"]) for x in result.loss_fn_outputs])`.
"""
    VALID = (
        Valid(
            "import numpy as np\n"
            "import pytrio as trio\n"
            "def nll(train: trio.TrainingClient, batch: list):\n"
            "    result = train.forward_backward(batch, 'cross_entropy').result()\n"
            "    logprobs = [x['logprobs'].to_numpy() for x in result.loss_fn_outputs]\n"
            "    return -np.concatenate(logprobs).sum()\n"
        ),
        Valid(
            "import numpy as np\n"
            "import pytrio as trio\n"
            "def build(tokens: list[int], weights: list[float]):\n"
            "    inputs = {'target_tokens': np.asarray(tokens[1:]), 'weights': weights[1:]}\n"
            "    datum = trio.Datum(model_input=trio.ModelInput.from_ints(tokens[:-1]),\n"
            "                       loss_fn_inputs=inputs)\n"
            "    return datum, np.asarray(inputs['weights']).sum(), list(inputs['weights'])\n"
        ),
        Valid(
            "import numpy as np\n"
            "import torch\n"
            "import pytrio as trio\n"
            "def totals(train: trio.TrainingClient, data: list):\n"
            "    out = train.forward(data, 'cross_entropy').result()\n"
            "    lp = [torch.tensor(o['logprobs'].tolist()) for o in out.loss_fn_outputs]\n"
            "    w = np.concatenate([d.loss_fn_inputs['weights'].to_numpy() for d in data])\n"
            "    return lp, w, len(out.loss_fn_outputs[0]['logprobs'])\n"
        ),
        Valid(
            "import numpy as np\n"
            "import pytrio as trio\n"
            "datum = trio.Datum(model_input=trio.ModelInput.from_ints([1, 2]),\n"
            "                   loss_fn_inputs={'weights': [1.0, 1.0]})\n"
            "w = np.asarray(datum.loss_fn_inputs['weights'].data)\n"
            "print(np.asarray([0.0, 1.0]), w)\n"
        ),
        Valid(
            "import numpy as np\n"
            "import tinker\n"
            "def nll(train: tinker.TrainingClient, batch):\n"
            "    result = train.forward_backward(batch, 'cross_entropy').result()\n"
            "    return np.concatenate([np.asarray(x['logprobs']) for x in result.loss_fn_outputs])\n",
            config={"sdk-modules": ["pytrio", "tinker"]},
        ),
        Valid(
            "import numpy as np\n"
            "import pytrio as trio\n"
            "def nll(train: trio.TrainingClient, batch: list):\n"
            "    result = train.forward_backward(batch, 'cross_entropy').result()\n"
            "    return np.concatenate([np.asarray(x['logprobs']) for x in result.loss_fn_outputs])\n",
            config={"target-version": "0.1"},
        ),
        Valid(
            "import numpy as np\n"
            "import pytrio as trio\n"
            "def weights(rows: list[tuple[list[int], list[float]]]):\n"
            "    data = []\n"
            "    for tokens, w in rows:\n"
            "        data.append(trio.Datum(model_input=trio.ModelInput.from_ints(tokens),\n"
            "                               loss_fn_inputs={'weights': w}))\n"
            "    return [d.loss_fn_inputs['weights'].to_numpy() for d in data], data\n"
        ),
        Valid(
            "import numpy as np\n"
            "rows = []\n"
            "rows.append({'weights': [0.0, 1.0]})\n"
            "inputs = {'weights': [0.0, 1.0], 'advantages': [0.5, 0.5]}\n"
            "arrays = {k: np.asarray(v) for k, v in inputs.items()}\n"
            "print(np.asarray(rows[0]['weights']), np.asarray(inputs.get('weights')),\n"
            "      [list(v) for v in inputs.values()], arrays)\n"
        ),
        Valid(
            "import numpy as np\n"
            "import pytrio as trio\n"
            "def arrays(train: trio.TrainingClient, data: list):\n"
            "    out = train.forward(data, 'cross_entropy').result().loss_fn_outputs[0]\n"
            "    found = {k: td.to_numpy() for k, td in out.items()}\n"
            "    return found, out.get('logprobs').to_numpy(), len(out.get('logprobs'))\n"
        ),
        Valid(
            "import numpy as np\n"
            "def mine(result, batch):\n"
            "    lp = np.concatenate([np.asarray(x['logprobs']) for x in result.loss_fn_outputs])\n"
            "    return lp, [np.asarray(x.loss_fn_inputs['weights']) for x in batch]\n"
        ),
    )
    INVALID = (
        Invalid(
            "import numpy as np\n"
            "import pytrio as trio\n"
            "def nll(train: trio.TrainingClient, batch: list):\n"
            "    result = train.forward_backward(batch, 'cross_entropy').result()\n"
            "    logprobs = [np.asarray(x['logprobs']) for x in result.loss_fn_outputs]\n"
            "    return -np.concatenate(logprobs).sum()\n",
            fixed="import numpy as np\n"
            "import pytrio as trio\n"
            "def nll(train: trio.TrainingClient, batch: list):\n"
            "    result = train.forward_backward(batch, 'cross_entropy').result()\n"
            "    logprobs = [x['logprobs'].to_numpy() for x in result.loss_fn_outputs]\n"
            "    return -np.concatenate(logprobs).sum()\n",
            unsafe=True,
            line=5,
            column=17,
            message_contains="zero-dimensional `object` array",
        ),
        # The real-world shape: a helper typed from its call sites, a list of Datums built by a
        # module function, weights read back from the Datums.
        Invalid(
            "import numpy as np\n"
            "import pytrio as trio\n"
            "def build(tokens, weights):\n"
            "    return trio.Datum(model_input=trio.ModelInput.from_ints(tokens[:-1]),\n"
            "                      loss_fn_inputs={'weights': np.asarray(weights[1:])})\n"
            "def totals(result, batch):\n"
            "    lp = np.concatenate([np.asarray(x['logprobs']) for x in result.loss_fn_outputs])\n"
            "    w = np.concatenate([np.asarray(x.loss_fn_inputs['weights']) for x in batch])\n"
            "    return float(-np.dot(lp, w)), float(w.sum())\n"
            "svc = trio.ServiceClient()\n"
            "train = svc.create_lora_training_client(base_model='Qwen/Qwen3-8B')\n"
            "data = [build(t, w) for t, w in rows]\n"
            "batch = data[:8]\n"
            "print(totals(train.forward_backward(batch, 'cross_entropy').result(), batch))\n",
            fixed="import numpy as np\n"
            "import pytrio as trio\n"
            "def build(tokens, weights):\n"
            "    return trio.Datum(model_input=trio.ModelInput.from_ints(tokens[:-1]),\n"
            "                      loss_fn_inputs={'weights': np.asarray(weights[1:])})\n"
            "def totals(result, batch):\n"
            "    lp = np.concatenate([x['logprobs'].to_numpy() for x in result.loss_fn_outputs])\n"
            "    w = np.concatenate([x.loss_fn_inputs['weights'].to_numpy() for x in batch])\n"
            "    return float(-np.dot(lp, w)), float(w.sum())\n"
            "svc = trio.ServiceClient()\n"
            "train = svc.create_lora_training_client(base_model='Qwen/Qwen3-8B')\n"
            "data = [build(t, w) for t, w in rows]\n"
            "batch = data[:8]\n"
            "print(totals(train.forward_backward(batch, 'cross_entropy').result(), batch))\n",
            unsafe=True,
            count=2,
            line=7,
        ),
        Invalid(
            "import numpy as np\n"
            "import pytrio as trio\n"
            "def nll(train: trio.TrainingClient, batch: list[trio.Datum]) -> float:\n"
            "    fb = train.forward(batch, 'cross_entropy').result()\n"
            "    total = 0.0\n"
            "    for datum, out in zip(batch, fb.loss_fn_outputs, strict=True):\n"
            "        w = datum.loss_fn_inputs['weights'].to_numpy()\n"
            "        total -= float(np.dot(np.array(out['logprobs']), w))\n"
            "    return total\n",
            fixed="import numpy as np\n"
            "import pytrio as trio\n"
            "def nll(train: trio.TrainingClient, batch: list[trio.Datum]) -> float:\n"
            "    fb = train.forward(batch, 'cross_entropy').result()\n"
            "    total = 0.0\n"
            "    for datum, out in zip(batch, fb.loss_fn_outputs, strict=True):\n"
            "        w = datum.loss_fn_inputs['weights'].to_numpy()\n"
            "        total -= float(np.dot(out['logprobs'].to_numpy(), w))\n"
            "    return total\n",
            unsafe=True,
            line=8,
            column=31,
        ),
        Invalid(
            "import torch\n"
            "import pytrio as trio\n"
            "def first(train: trio.TrainingClient, data: list):\n"
            "    out = train.forward(data, 'cross_entropy').result().loss_fn_outputs[0]\n"
            "    return torch.tensor(out['logprobs'], dtype=torch.float32)\n",
            fixed="import torch\n"
            "import pytrio as trio\n"
            "def first(train: trio.TrainingClient, data: list):\n"
            "    out = train.forward(data, 'cross_entropy').result().loss_fn_outputs[0]\n"
            "    return torch.tensor(out['logprobs'].to_numpy(), dtype=torch.float32)\n",
            unsafe=True,
            message_contains="Could not infer dtype",
        ),
        Invalid(
            "import numpy as np\n"
            "import pytrio as trio\n"
            "def joined(train: trio.TrainingClient, data: list):\n"
            "    fb = train.forward_backward(data, 'cross_entropy').result()\n"
            "    return np.concatenate([o['logprobs'] for o in fb.loss_fn_outputs])\n",
            fixed="import numpy as np\n"
            "import pytrio as trio\n"
            "def joined(train: trio.TrainingClient, data: list):\n"
            "    fb = train.forward_backward(data, 'cross_entropy').result()\n"
            "    return np.concatenate([o['logprobs'].to_numpy() for o in fb.loss_fn_outputs])\n",
            unsafe=True,
            column=28,
        ),
        Invalid(
            "import pytrio as trio\n"
            "datum = trio.Datum(model_input=trio.ModelInput.from_ints([1, 2]),\n"
            "                   loss_fn_inputs={'weights': [0.0, 1.0]})\n"
            "print(list(datum.loss_fn_inputs['weights']), sum(datum.loss_fn_inputs['weights']))\n",
            fixed=None,
            count=2,
            message_contains="field pairs",
        ),
        Invalid(
            "import pytrio as trio\n"
            "def mean_weight(datums: list[trio.Datum]) -> float:\n"
            "    return sum(float(d.loss_fn_inputs['weights']) for d in datums) / len(datums)\n",
            fixed=None,
            message_contains="`float()` raises `TypeError`",
        ),
        Invalid(
            "import pytrio as trio\n"
            "def last_logprob(train: trio.TrainingClient, data: list[trio.Datum]) -> float:\n"
            "    for out in train.forward(data, 'cross_entropy').result().loss_fn_outputs:\n"
            "        return out['logprobs'][-1]\n",
            fixed=None,
            line=4,
            column=16,
            message_contains="not subscriptable",
        ),
        Invalid(
            "import torch\n"
            "import pytrio as trio\n"
            "def stacked(data: list):\n"
            "    datums = [trio.Datum(model_input=trio.ModelInput.from_ints(t), loss_fn_inputs=i)\n"
            "              for t, i in data]\n"
            "    return torch.stack([d.loss_fn_inputs['target_tokens'] for d in datums])\n",
            fixed=None,
            line=6,
        ),
        # A list filled by `.append`, read back by index.
        Invalid(
            "import numpy as np\n"
            "import pytrio as trio\n"
            "def first_weights(rows):\n"
            "    data = []\n"
            "    for tokens, w in rows:\n"
            "        data.append(trio.Datum(model_input=trio.ModelInput.from_ints(tokens),\n"
            "                               loss_fn_inputs={'weights': w}))\n"
            "    return np.asarray(data[0].loss_fn_inputs['weights'])\n",
            fixed="import numpy as np\n"
            "import pytrio as trio\n"
            "def first_weights(rows):\n"
            "    data = []\n"
            "    for tokens, w in rows:\n"
            "        data.append(trio.Datum(model_input=trio.ModelInput.from_ints(tokens),\n"
            "                               loss_fn_inputs={'weights': w}))\n"
            "    return data[0].loss_fn_inputs['weights'].to_numpy()\n",
            unsafe=True,
            line=8,
        ),
        # A list filled by `.extend` from a helper, walked by a loop.
        Invalid(
            "import numpy as np\n"
            "import pytrio as trio\n"
            "def build(tokens):\n"
            "    return trio.Datum(model_input=trio.ModelInput.from_ints(tokens[:-1]),\n"
            "                      loss_fn_inputs={'weights': [1.0] * (len(tokens) - 1)})\n"
            "def total_weight(chunks):\n"
            "    batch = []\n"
            "    for chunk in chunks:\n"
            "        batch.extend([build(t) for t in chunk])\n"
            "    total = 0.0\n"
            "    for datum in batch:\n"
            "        total += float(np.asarray(datum.loss_fn_inputs['weights']).sum())\n"
            "    return total\n",
            fixed="import numpy as np\n"
            "import pytrio as trio\n"
            "def build(tokens):\n"
            "    return trio.Datum(model_input=trio.ModelInput.from_ints(tokens[:-1]),\n"
            "                      loss_fn_inputs={'weights': [1.0] * (len(tokens) - 1)})\n"
            "def total_weight(chunks):\n"
            "    batch = []\n"
            "    for chunk in chunks:\n"
            "        batch.extend([build(t) for t in chunk])\n"
            "    total = 0.0\n"
            "    for datum in batch:\n"
            "        total += float(datum.loss_fn_inputs['weights'].to_numpy().sum())\n"
            "    return total\n",
            unsafe=True,
            line=12,
        ),
        # `.items()`, `.get()` and `.values()` of an output or input dict.
        Invalid(
            "import numpy as np\n"
            "import pytrio as trio\n"
            "def arrays(train: trio.TrainingClient, data: list):\n"
            "    out = train.forward(data, 'cross_entropy').result()\n"
            "    found = {}\n"
            "    for key, td in out.loss_fn_outputs[0].items():\n"
            "        found[key] = np.asarray(td)\n"
            "    return found\n",
            fixed="import numpy as np\n"
            "import pytrio as trio\n"
            "def arrays(train: trio.TrainingClient, data: list):\n"
            "    out = train.forward(data, 'cross_entropy').result()\n"
            "    found = {}\n"
            "    for key, td in out.loss_fn_outputs[0].items():\n"
            "        found[key] = td.to_numpy()\n"
            "    return found\n",
            unsafe=True,
            line=7,
        ),
        Invalid(
            "import torch\n"
            "import pytrio as trio\n"
            "def logprobs(train: trio.TrainingClient, data: list):\n"
            "    out = train.forward(data, 'cross_entropy').result()\n"
            "    return torch.tensor(out.loss_fn_outputs[0].get('logprobs'))\n",
            fixed="import torch\n"
            "import pytrio as trio\n"
            "def logprobs(train: trio.TrainingClient, data: list):\n"
            "    out = train.forward(data, 'cross_entropy').result()\n"
            "    return torch.tensor(out.loss_fn_outputs[0].get('logprobs').to_numpy())\n",
            unsafe=True,
            message_contains="Could not infer dtype",
        ),
        Invalid(
            "import pytrio as trio\n"
            "def values(datum: trio.Datum):\n"
            "    return [list(td) for td in datum.loss_fn_inputs.values()]\n",
            fixed=None,
            message_contains="field pairs",
        ),
    )
    reach = limited(
        "local-name",
        "class-attribute",
        "init-attribute",
        "helper-return",
        "call-site-parameter",
        "call-site-method-parameter",
        "pydantic-default",
        "argparse-default",
        "config-dict",
        "loop-variable",
        "dict-entry-get",
        "annotated-parameter",
        "nested-coroutine-parameter",
        "queue-worker",
    )

    def _is_tensor_data(self, expr: ast.expr) -> bool:
        typ = self.model.type_of(expr)
        return typ is not None and typ.kind is Kind.TENSOR_DATA

    def _flag(
        self, node: ast.expr, effect: str, fix: Fix | None = None, *, at: ast.expr | None = None
    ) -> None:
        message = self.message.format(expr=_short(node), effect=effect)
        self.report(at or node, message, fix=fix)

    def visit_Call(self, node: ast.Call) -> None:
        if not node.args or any(isinstance(a, ast.Starred) for a in node.args):
            return
        callee = dotted_name(node.func)
        if callee is None:
            return
        module, _, name = callee.rpartition(".")
        first = node.args[0]
        if module in _NUMPY and name in _NUMPY_JOINS:
            self._joined(node, first, numpy=True)
        elif module == "torch" and name in _TORCH_JOINS:
            self._joined(node, first, numpy=False)
        elif callee not in _CONVERSIONS or not self._is_tensor_data(first):
            return  # checked by name first: most calls are none of these
        elif module in _NUMPY and name in _NUMPY_ARRAYS:
            whole = len(node.args) == 1 and not node.keywords
            if whole:
                fix_edit = edit(node, "Call", _call_to_numpy)
            elif isinstance(first, _WRAPPABLE):
                fix_edit = edit(first, type(first).__name__, _to_numpy)
            else:
                fix_edit = None
            self._flag(
                first,
                f"`{callee}` wraps it in a zero-dimensional `object` array (`np.concatenate` "
                "of those raises `ValueError`, `.sum()` gives the `TensorData` back)",
                self._fix(fix_edit),
                at=node,
            )
        elif module == "torch" and name in _TORCH_TENSORS | {"from_numpy"}:
            fix_edit = (
                edit(first, type(first).__name__, _to_numpy)
                if isinstance(first, _WRAPPABLE)
                else None
            )
            error = (
                "RuntimeError: Could not infer dtype of TensorData"
                if name in ("tensor", "as_tensor")
                else "TypeError"
            )
            self._flag(first, f"`{callee}` raises `{error}`", self._fix(fix_edit), at=node)
        elif isinstance(node.func, ast.Name) and len(node.args) == 1 and not node.keywords:
            if callee in _FIELD_PAIRS:
                self._flag(
                    first,
                    f"`{callee}()` iterates the pydantic model's field pairs "
                    "(`('data', [...])`, `('dtype', ...)`, `('shape', [...])`), not its values",
                    at=node,
                )
            elif callee in _SCALARS:
                self._flag(
                    first,
                    f"`{callee}()` raises `TypeError` (read a value from `.tolist()`)",
                    at=node,
                )
            elif callee == "sum":
                self._flag(
                    first,
                    "`sum()` iterates the pydantic model's field pairs and raises `TypeError`",
                    at=node,
                )

    def _joined(self, node: ast.Call, sequence: ast.expr, *, numpy: bool) -> None:
        if isinstance(sequence, ast.ListComp | ast.GeneratorExp):
            items = [sequence.elt]
        elif isinstance(sequence, ast.List | ast.Tuple):
            items = sequence.elts
        else:
            return
        found = [item for item in items if self._is_tensor_data(item)]
        callee = dotted_name(node.func)
        for item in found:
            if numpy:
                effect = (
                    "`np.concatenate` raises `ValueError: zero-dimensional arrays cannot be "
                    "concatenated`"
                    if callee is not None and callee.endswith("concatenate")
                    else f"`{callee}` gives an `object` array of `TensorData`"
                )
                fix_edit = (
                    edit(item, type(item).__name__, _to_numpy)
                    if isinstance(item, _WRAPPABLE)
                    else None
                )
                self._flag(item, effect, self._fix(fix_edit))
            else:
                self._flag(item, f"`{callee}` raises `TypeError` (it takes tensors)")

    def _fix(self, fix_edit: NodeEdit | None) -> Fix | None:
        if fix_edit is None:
            return None
        return unsafe_fix("Convert the `TensorData` with `.to_numpy()`", fix_edit)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if self._is_tensor_data(node.value):
            self._flag(
                node.value,
                "indexing raises `TypeError` ('TensorData' object is not subscriptable)",
            )
