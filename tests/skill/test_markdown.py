"""Every ```python block in the skill's Markdown (and every example) parses, passes trio-lint, and
uses only SDK names and keyword arguments that exist in the installed pytrio.

A block preceded by `<!-- trio-lint: bad-example -->` shows a mistake on purpose: it carries a
`# noqa` so `trio-lint` stays clean on our docs, and without its noqa comments it must produce a
finding. The "Example" blocks of the generated rules reference are the rules' own bad
code, tested by trio-lint's rule tests, and are skipped here.
"""

import ast
import inspect
import re
from dataclasses import dataclass
from pathlib import Path

import pydantic
import pytest
import pytrio as trio

import trio_lint

ROOT = Path(__file__).resolve().parents[2]
MARKDOWN = sorted(
    [
        *(ROOT / name for name in ("SKILL.md", "README.md", "README.zh-CN.md")),
        *(ROOT / "references").glob("*.md"),
        *(ROOT / "best-practices").glob("*.md"),
    ]
)
BAD_MARKER = "<!-- trio-lint: bad-example -->"
CLIENTS = (trio.ServiceClient, trio.TrainingClient, trio.SamplingClient, trio.RestClient)
CLIENT_METHODS = {
    name
    for cls in CLIENTS
    for name, value in vars(cls).items()
    if callable(value) and name[0] != "_"
}


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    code: str
    bad: bool

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def python_blocks(path: Path) -> list[Block]:
    blocks, heading, previous = [], "", ""
    lines = path.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        if line.strip() == "```python":
            start = index + 1
            end = start
            while lines[end].strip() != "```":
                end += 1
            bad = previous.strip() == BAD_MARKER
            rule_example = path.name == "lint-rules.md" and heading == "Example"
            if not rule_example:
                blocks.append(Block(path, start + 1, "\n".join(lines[start:end]) + "\n", bad))
            index = end
        if line.strip():
            previous = line
        index += 1
    return blocks


BLOCKS = [block for path in MARKDOWN if path.exists() for block in python_blocks(path)]
EXAMPLES = [
    Block(path, 1, path.read_text(encoding="utf-8"), False)
    for path in sorted((ROOT / "examples").glob("*.py"))
]
GOOD = [block for block in BLOCKS if not block.bad]
BAD = [block for block in BLOCKS if block.bad]


def test_the_docs_have_code_to_check() -> None:
    assert len(GOOD) >= 25
    assert {block.path.name for block in GOOD} >= {"SKILL.md", "sft.md", "rl.md", "async.md"}


@pytest.mark.parametrize("block", GOOD, ids=lambda b: b.id)
def test_block_parses_and_passes_trio_lint(block: Block) -> None:
    ast.parse(block.code)
    findings = trio_lint.lint_source(block.code, path=f"{block.path.stem}_{block.line}.py")
    assert not findings, "\n".join(str(finding) for finding in findings)


NOQA = re.compile(r"\s*# noqa(: *[A-Z0-9, ]+)?$", re.M)


@pytest.mark.parametrize("block", BAD, ids=lambda b: b.id)
def test_bad_example_is_flagged_once_its_noqa_is_removed(block: Block) -> None:
    path = f"{block.path.stem}_{block.line}.py"
    assert not trio_lint.lint_source(block.code, path=path), "mark the line with `# noqa: CODE`"
    assert trio_lint.lint_source(NOQA.sub("", block.code), path=path)


def _trio_aliases(tree: ast.Module) -> set[str]:
    aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases |= {a.asname or a.name for a in node.names if a.name == "pytrio"}
    return aliases


def _chain(node: ast.AST) -> list[str] | None:
    """`trio.types.SampleResponse` -> ["trio", "types", "SampleResponse"]."""
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *reversed(names)]
    return None


def _check_call(function: object, call: ast.Call, where: str) -> None:
    keywords = [k.arg for k in call.keywords if k.arg is not None]
    if isinstance(function, type) and issubclass(function, pydantic.BaseModel):
        unknown = set(keywords) - set(function.model_fields)
        assert not unknown, f"{where}: {function.__name__} has no field {sorted(unknown)}"
        return
    signature = inspect.signature(function)
    positional = [None] * len([a for a in call.args if not isinstance(a, ast.Starred)])
    try:
        signature.bind_partial(*positional, **dict.fromkeys(keywords))
    except TypeError as error:
        raise AssertionError(f"{where}: {error}") from None


def _check_method(call: ast.Call, name: str, where: str) -> None:
    errors = []
    for cls in CLIENTS:
        if name in vars(cls):
            try:
                _check_call(getattr(cls, name).__get__(object()), call, where)
                return
            except (AssertionError, TypeError) as error:
                errors.append(f"{cls.__name__}.{name}: {error}")
    raise AssertionError("; ".join(errors))


@pytest.mark.parametrize("block", EXAMPLES, ids=lambda b: b.id)
def test_example_passes_trio_lint(block: Block) -> None:
    findings = trio_lint.lint_source(block.code, path=block.path.name)
    assert not findings, "\n".join(str(finding) for finding in findings)


@pytest.mark.parametrize("block", GOOD + EXAMPLES, ids=lambda b: b.id)
def test_block_uses_only_real_sdk_names_and_keywords(block: Block) -> None:
    tree = ast.parse(block.code)
    aliases = _trio_aliases(tree)
    for node in ast.walk(tree):
        where = f"{block.id} line {getattr(node, 'lineno', 0)}"
        chain = _chain(node) if isinstance(node, ast.Attribute) else None
        if chain and chain[0] in aliases:
            target: object = trio
            for attribute in chain[1:]:
                assert hasattr(target, attribute), f"{where}: pytrio has no {'.'.join(chain)}"
                target = getattr(target, attribute)
        if not isinstance(node, ast.Call):
            continue
        chain = _chain(node.func)
        if chain and chain[0] in aliases:
            target = trio
            for attribute in chain[1:]:
                target = getattr(target, attribute)
            if callable(target):
                _check_call(target, node, where)
        elif isinstance(node.func, ast.Attribute) and node.func.attr in CLIENT_METHODS:
            _check_method(node, node.func.attr, where)


def test_method_check_catches_a_wrong_keyword() -> None:
    call = ast.parse("sampler.sample(prompt=p, max_new_tokens=5)").body[0].value
    with pytest.raises(AssertionError, match="max_new_tokens"):
        _check_method(call, "sample", "example")
    call = ast.parse("trio.AdamParams(lr=1e-4)").body[0].value
    with pytest.raises(AssertionError, match="lr"):
        _check_call(trio.AdamParams, call, "example")


def test_python_fences_are_closed_and_tagged() -> None:
    for path in MARKDOWN:
        if not path.exists():
            continue
        fences = re.findall(r"^```(\S*)", path.read_text(encoding="utf-8"), re.M)
        assert len(fences) % 2 == 0, f"{path.name}: unclosed code fence"
