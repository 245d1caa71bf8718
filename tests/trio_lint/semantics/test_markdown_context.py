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


CATALOGUES = """```python
import pytrio as trio
client = trio.ServiceClient()
train = client.create_lora_training_client(base_model="Qwen/Qwen3-8B")
result = train.forward_backward(batch, "cross_entropy").result()
```

## SaveWeightsResponse

```python
result.path   # str
result.model  # str
```

```python
rest = client.create_rest_client()
rest.list_training_runs()      # runs
rest.list_checkpoints(run_id)  # one run's checkpoints
rest.list_user_checkpoints()   # every checkpoint
```

```python
train.forward_backward(data, "cross_entropy")
train.optim_step(trio.AdamParams(learning_rate=1e-4))
```

```python
print(result.elapsed_time)
```
"""


def test_a_catalogue_block_is_documentation_and_hands_its_names_on() -> None:
    found = _found(CATALOGUES)
    # The listed fields and calls: not read from the earlier block's result, nothing dropped.
    assert not [line for _, line in found if line < 22]
    # Two calls in a row are a training step: their futures are dropped.
    assert ("PTR102", 23) in found and ("PTR102", 24) in found
    # The block after the catalogue still sees the ForwardBackwardOutput of the first block.
    assert ("PTR006", 28) in found


def test_a_catalogue_in_a_python_file_is_a_program() -> None:
    code = (
        "import pytrio as trio\n"
        "rest = trio.ServiceClient().create_rest_client()\n"
        "rest.list_training_runs()\nrest.list_checkpoints(run_id)\nrest.list_user_checkpoints()\n"
    )
    assert [d.code for d in lint_source(code, path="x.py")] == ["PTR102"] * 3
