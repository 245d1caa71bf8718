"""Precision fixes measured on real code: what stays quiet by default, how severe the rest is."""

from __future__ import annotations

import ast
import keyword
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from trio_lint import lint_source
from trio_lint.output.diagnostics import Severity

README_MODEL = (
    "import pytrio as trio\n"
    "svc = trio.ServiceClient()\n"
    "train = svc.create_lora_training_client(base_model='Qwen/Qwen3.5-4B', rank=32)\n"
)


def _found(source: str, code: str, **config) -> list:
    return [d for d in lint_source(source, "x.py", {"select": [code], **config}) if d.code == code]


def test_ptr402_never_guesses_a_catalogue() -> None:
    """The SDK README's own model is not flagged without a configured list; with one it is."""
    assert _found(README_MODEL, "PTR402") == []
    (finding,) = _found(README_MODEL, "PTR402", **{"trainable-models": ["Qwen/Qwen3-8B"]})
    assert "Qwen/Qwen3.5-4B" in finding.message
    assert _found(README_MODEL, "PTR402", **{"trainable-models": ["Qwen/Qwen3.5-4B"]}) == []


def test_ptr002_public_name_by_internal_module_is_a_convention() -> None:
    works = "import pytrio as trio\nfrom pytrio.types.future.api_future import APIFuture\n"
    (finding,) = _found(works, "PTR002")
    assert finding.severity is Severity.CONVENTION
    assert "pytrio.types" in finding.message
    gone = "from pytrio.lib.training_client import TrainingClient\n"
    (finding,) = _found(gone, "PTR002")
    assert finding.severity is Severity.ERROR


def test_ptr301_targets_follow_the_target_version() -> None:
    source = (
        "import pytrio as trio\n"
        "d = trio.Datum(model_input=trio.ModelInput.from_ints([1, 2]),\n"
        "               loss_fn_inputs={'target_tokens': [-100, 3]})\n"
    )
    for version in ("0.2", "0.2.4", "0.2.9"):
        assert _found(source, "PTR301", **{"target-version": version}) == [], version
    for version in ("0.1", "0.1.13", "0.2.3"):
        (finding,) = _found(source, "PTR301", **{"target-version": version})
        assert finding.severity is Severity.WARNING and version in finding.message
    inputs = "import pytrio as trio\nx = trio.ModelInput.from_ints([-100, 3])\n"
    assert _found(inputs, "PTR301", **{"target-version": "0.2.9"})


def test_ptr105_quiet_in_a_one_shot_async_main() -> None:
    source = (
        "import asyncio\nimport pytrio as trio\n"
        "async def main():\n"
        "    svc = trio.ServiceClient()\n"
        "    train = svc.create_lora_training_client(base_model='Qwen/Qwen3.5-4B')\n"
        "    for batch in batches:\n"
        "        await asyncio.sleep(0)\n"
        "        train.forward_backward(batch, 'cross_entropy').result()\n"
        "asyncio.run(main())\n"
    )
    assert _found(source, "PTR105") == []
    spawned = source.replace("asyncio.run(main())", "asyncio.run(asyncio.gather(main(), main()))")
    assert len(_found(spawned, "PTR105")) == 2


_IDENT = st.from_regex(r"[a-z_][a-z0-9_]{0,24}", fullmatch=True).filter(
    lambda s: not keyword.iskeyword(s)
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_IDENT, min_size=1, max_size=6), st.lists(_IDENT, max_size=3))
def test_client_timeout_message_never_cuts_a_name(chain: list[str], args: list[str]) -> None:
    """PTR109 shortens the receiver at node boundaries: every name it prints is a whole name
    of the source, and what it prints still parses."""
    receiver = ".".join(chain) + f"({', '.join(args)})"
    code = (
        "import pytrio as trio\n"
        f"def f(train: trio.TrainingClient, {', '.join(dict.fromkeys(args)) or 'x'}):\n"
        f"    return train.save_state({receiver}).result(timeout=5)\n"
    )
    (found,) = [d for d in lint_source(code, "x.py", {"select": ["PTR109"]}) if d.code == "PTR109"]
    shown = found.message.split("`")[1]
    assert shown.endswith(".result()")
    ast.parse(shown)
    words = set(re.findall(r"[A-Za-z_]\w*", code))
    assert set(re.findall(r"[A-Za-z_]\w*", shown)) <= words


def test_ptr304_takes_a_loss_fn_constant_that_is_no_string() -> None:
    """`forward_backward(data, 3)` is no loss name: PTR304 stays quiet (it used to crash, a
    PTR903 internal error), and still reports a dropped input of a named loss after it."""
    code = (
        "import pytrio as trio\n"
        "train = trio.ServiceClient().create_lora_training_client(base_model='Qwen/Qwen3-8B')\n"
        "train.forward_backward([], 3).result()\n"
        "d = trio.Datum(model_input=mi, loss_fn_inputs={'target_tokens': t, 'advantages': a})\n"
        "train.forward_backward([d], 'cross_entropy').result()\n"
    )
    found = lint_source(code, "x.py", {"select": ["PTR304", "PTR903"]})
    assert [d.code for d in found] == ["PTR304"], found
