"""PTR213's advice for a missing `to_<library>()` on a pytrio object is code that works: it is
run here against the installed pytrio, on a real `ForwardBackwardOutput`."""

from __future__ import annotations

import re
import textwrap

import numpy as np
import pytest
import torch
from pytrio.types import ForwardBackwardOutput, TensorData

from trio_lint import lint_source

CONFIG = {"select": ["PTR213"], "force-sdk": True}
SOURCE = textwrap.dedent(
    """\
    import pytrio as trio

    def logprobs(train: trio.TrainingClient, batch):
        out = train.forward_backward(batch, "cross_entropy").result()
        return out.loss_fn_outputs[0]["logprobs"].to_torch()
    """
)


def _output(values: np.ndarray) -> ForwardBackwardOutput:
    return ForwardBackwardOutput(
        loss_fn_outputs=[{"logprobs": TensorData.from_numpy(values)}], metrics={"loss:sum": 1.0}
    )


def test_to_torch_advice_is_a_working_conversion_not_the_constructor() -> None:
    (finding,) = lint_source(SOURCE, "example.py", CONFIG)
    assert "did you mean" not in finding.message
    match = re.search(r"; use `([^`]+)`$", finding.message)
    assert match is not None, finding.message
    advice = match.group(1)

    values = np.array([[-0.5, -1.25, -2.0]], dtype=np.float32)
    out = _output(values)
    with pytest.raises(AttributeError):
        out.loss_fn_outputs[0]["logprobs"].to_torch()  # the finding is true
    got = eval(advice, {"torch": torch, "out": out})  # the advice is our own message
    assert isinstance(got, torch.Tensor)
    assert got.dtype == torch.float32 and got.shape == (1, 3)
    assert torch.equal(got, torch.from_numpy(values))


def test_to_torch_on_the_class_names_the_argument() -> None:
    source = "import pytrio as trio\nlp = trio.types.TensorData.to_torch(td)\n"
    (finding,) = lint_source(source, "example.py", CONFIG)
    assert finding.message.endswith("use `torch.from_numpy(td.to_numpy())`"), finding.message


def test_a_classmethod_with_the_same_verb_is_still_suggested() -> None:
    source = (
        "import pytrio as trio\n"
        "def build(datum: trio.Datum, values):\n"
        "    return datum.loss_fn_inputs['weights'].from_nmupy(values)\n"
    )
    (finding,) = lint_source(source, "example.py", CONFIG)
    assert finding.message.endswith("did you mean `from_numpy`?"), finding.message
