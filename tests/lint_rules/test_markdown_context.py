"""Markdown in context: a fenced block is checked with the names earlier blocks of the same
document bound (as doctest continues a session), not only their imports."""

from __future__ import annotations

from trio_lint import lint_source

DOC = """# Training

```python
import pytrio as trio
train = trio.ServiceClient().create_lora_training_client(base_model="Qwen/Qwen3-8B")
```

One step:

```python
result = train.forward_backward(batch, "cross_entropy").result()
```

Two blocks later:

```python
print(result.elapsed_time)
metrics = result.metrics
```

```python
print(metrics["loss:sum"])
```

A fragment still stays silent:

```python
print(result.elapsed_time
```
"""


def _found(doc: str) -> list[tuple[str, int]]:
    return [(d.code, d.line) for d in lint_source(doc, path="doc.md")]


def test_a_block_sees_the_typed_names_of_earlier_blocks() -> None:
    found = _found(DOC)
    assert ("PTR006", 17) in found  # `result.elapsed_time`: removed in 0.2.0
    assert ("PTR308", 22) in found  # `metrics["loss:sum"]`: the 0.2 key is loss_sum
    assert not any(line > 23 for _, line in found)  # the fragment is skipped


def test_a_later_block_rebinding_the_name_wins() -> None:
    doc = DOC.replace(
        "print(result.elapsed_time)\n", "result = {'elapsed_time': 1.0}\nprint(result)\n"
    )
    assert not any(code == "PTR006" for code, _ in _found(doc))


def test_a_python_file_is_one_unit_and_seeds_nothing() -> None:
    code = "import pytrio as trio\nprint(result.elapsed_time)\n"
    assert lint_source(code, path="x.py") == []
