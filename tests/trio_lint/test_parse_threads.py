"""trio-lint parses safely from several threads: the language server lints in one thread and fixes
in another, and CPython 3.11's AST constructor keeps its depth counter in interpreter-wide state,
so two `ast.parse` calls at once can fail with "SystemError: AST constructor recursion depth
mismatch" on sources that are fine (https://github.com/python/cpython/issues/106905). Every
parse in trio_lint goes through `trio_lint.lint.parse.parse_ast`, which takes turns under a lock and
parses again when that error comes from a thread outside trio-lint."""

from __future__ import annotations

import ast
import threading
import time
from pathlib import Path

import pytest

import trio_lint
from trio_lint import fix_source, lint_source
from trio_lint.lint.parse import parse, parse_ast

PACKAGE = Path(trio_lint.__file__).parent
# Lint and fix both parse the module, a string annotation (the semantic model), a fenced block
# of Markdown and the fixed code (fix verification).
PYTHON = """import pytrio as trio

adam: "trio.AdamParams" = trio.AdamParams(lr=1e-4)
client = trio.ServiceClient()
training = client.create_lora_training_client(base_model="Qwen/Qwen3-8B")
training.optim_step(adam)  # noqa: PTR103
"""
MARKDOWN = f"# Notes\n\n```python\n{PYTHON}```\n"
MISMATCH = "AST constructor recursion depth mismatch (before=144, after=368)"


def test_no_module_of_trio_lint_calls_ast_parse_itself() -> None:
    callers = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "parse"
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "ast"
            ):
                callers.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert callers == ["lint/parse.py:" + callers[0].split(":")[1]], callers  # parse_ast's own call


def test_a_depth_mismatch_is_parsed_again(monkeypatch) -> None:
    real, calls = ast.parse, []

    def collides_once(*args, **kwargs):
        calls.append(args)
        if len(calls) == 1:
            raise SystemError(MISMATCH)
        return real(*args, **kwargs)

    monkeypatch.setattr(ast, "parse", collides_once)
    assert ast.dump(parse(PYTHON)) == ast.dump(real(PYTHON))
    assert len(calls) == 2


def test_other_system_errors_and_a_lasting_mismatch_are_raised(monkeypatch) -> None:
    def fails(*_args, **_kwargs):
        raise SystemError(message)

    monkeypatch.setattr(ast, "parse", fails)
    message = "some other interpreter error"
    with pytest.raises(SystemError, match="other interpreter error"):
        parse_ast(PYTHON)
    message = MISMATCH
    with pytest.raises(SystemError, match="depth mismatch"):
        parse_ast(PYTHON)


def test_lint_and_fix_in_threads_never_parse_at_once(monkeypatch) -> None:
    expected = (
        [d.code for d in lint_source(PYTHON, "train.py")],
        [d.code for d in lint_source(MARKDOWN, "notes.md")],
        fix_source(PYTHON, "train.py").source,
    )
    assert expected[0] and expected[1] and expected[2] != PYTHON  # each path parses something
    real, lock = ast.parse, threading.Lock()
    active, most = [0], [0]

    def slow_parse(*args, **kwargs):
        with lock:
            active[0] += 1
            most[0] = max(most[0], active[0])
        try:
            time.sleep(0.002)  # long enough for another thread to start a parse meanwhile
            return real(*args, **kwargs)
        finally:
            with lock:
                active[0] -= 1

    monkeypatch.setattr(ast, "parse", slow_parse)
    results: list[tuple] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(5):
                results.append(
                    (
                        [d.code for d in lint_source(PYTHON, "train.py")],
                        [d.code for d in lint_source(MARKDOWN, "notes.md")],
                        fix_source(PYTHON, "train.py").source,
                    )
                )
        except BaseException as error:  # reported below, with the thread's result
            errors.append(error)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert errors == []
    assert results == [expected] * 20
    assert most[0] == 1, f"{most[0]} parses ran at once"


def test_a_parse_shows_no_warning_and_leaves_the_filters_as_they_were() -> None:
    """Invalid escapes are the user's business, not findings; and the filters are swapped under
    the parse lock, so a parse on another thread cannot put back a stale copy of them."""
    import warnings

    from trio_lint.lint.parse import parses

    source = 'path = "C:\\d"\nvalue = 1 is 1\n'
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        before = list(warnings.filters)
        assert parses(source)
        parse(source)
        assert caught == [] and warnings.filters == before
        compile(source, "<user>", "exec")  # the same source does warn outside trio-lint
        assert caught
