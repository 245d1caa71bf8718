"""SKILL.md and its folders follow the Agent Skills rules (agentskills.io spec, skills-ref)
and the layout `npx skills add <repo> --skill pytrio` installs."""

import re
from pathlib import Path

import pytest
import yaml

import pytrio_facts

ROOT = Path(__file__).resolve().parents[2]
ALLOWED_KEYS = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
NAME_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
TRIGGERS = (
    "import pytrio as trio",
    "pytrio",
    "ServiceClient",
    "forward_backward",
    "PyTRIO",
    "TRIO training",
    "SFT",
    "GRPO",
    "DPO",
)


def split_frontmatter(text: str) -> tuple[str, str]:
    match = re.match(r"^---\n(.*?)\n---\n(.*)$", text, re.S)
    assert match, "SKILL.md must start with a --- frontmatter block"
    return match.group(1), match.group(2)


FRONTMATTER, BODY = split_frontmatter((ROOT / "SKILL.md").read_text(encoding="utf-8"))
META = yaml.safe_load(FRONTMATTER)


def test_only_spec_keys() -> None:
    assert set(META) <= ALLOWED_KEYS, set(META) - ALLOWED_KEYS


def test_name() -> None:
    name = META["name"]
    assert isinstance(name, str) and NAME_PATTERN.fullmatch(name) and len(name) <= 64
    assert name == "pytrio"


def test_description_is_a_quoted_string_with_triggers_first() -> None:
    description = META["description"]
    assert isinstance(description, str) and 0 < len(description) <= 1024
    assert re.search(r'^description: ".*"$', FRONTMATTER, re.M), "quote the description"
    assert "<" not in description and ">" not in description
    head = description[:250]
    missing = [trigger for trigger in TRIGGERS if trigger not in head]
    assert not missing, f"triggers beyond the first 250 characters: {missing}"
    assert pytrio_facts.SDK_VERSION in description


def test_body_is_short_and_names_the_sdk_version() -> None:
    assert len(BODY.splitlines()) < 500
    assert f"pytrio {pytrio_facts.SDK_VERSION}" in BODY


def test_resource_folders_are_one_level_deep_with_contents_for_long_files() -> None:
    for folder in ("references", "best-practices", "examples"):
        entries = list((ROOT / folder).iterdir())
        assert entries, folder
        assert not [e for e in entries if e.is_dir() and e.name != "__pycache__"], folder
    for path in [*(ROOT / "references").glob("*.md"), *(ROOT / "best-practices").glob("*.md")]:
        lines = path.read_text(encoding="utf-8").splitlines()
        if len(lines) > 300:
            head = "\n".join(lines[:15]).lower()
            assert "contents" in head, f"{path.name} has {len(lines)} lines and no contents list"


def test_every_relative_link_resolves() -> None:
    docs = [
        ROOT / "SKILL.md",
        *(ROOT / "references").glob("*.md"),
        *(ROOT / "best-practices").glob("*.md"),
    ]
    for doc in docs:
        text = re.sub(r"`[^`\n]*`", "", doc.read_text(encoding="utf-8"))  # no links in code
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if re.match(r"^[a-z]+://", target):
                continue
            assert (doc.parent / target).exists(), f"{doc.name}: broken link {target}"


def test_routing_table_names_every_example_and_best_practice() -> None:
    for path in [*(ROOT / "examples").glob("*.py"), *(ROOT / "best-practices").glob("*.md")]:
        assert f"{path.parent.name}/{path.name}" in BODY, path.name


def test_examples_are_plain_pytrio_scripts() -> None:
    scripts = sorted((ROOT / "examples").glob("*.py"))
    assert [p.name[:3] for p in scripts] == [f"{i:02d}_" for i in range(1, len(scripts) + 1)]
    for script in scripts:
        text = script.read_text(encoding="utf-8")
        assert "import pytrio as trio" in text
        assert "argparse" in text
        assert f"trio-local run python examples/{script.name}" in text
        for ours in ("trio_local", "trio_lint", "mcp_server", "pytrio_facts"):
            assert f"import {ours}" not in text and f"from {ours}" not in text


def _structure(text: str) -> tuple[list[str], list[str], list[str]]:
    headings = re.findall(r"^(#+) ", text, re.M)
    code = re.findall(r"```[a-z]*\n.*?```", text, re.S)
    blocks = re.findall(r"<!-- BEGIN GENERATED: ([\w-]+) -->", text)
    return headings, code, blocks


def test_the_chinese_readme_follows_the_english_one() -> None:
    english = (ROOT / "README.md").read_text(encoding="utf-8")
    chinese = (ROOT / "README.zh-CN.md").read_text(encoding="utf-8")
    assert _structure(chinese) == _structure(english), "update README.zh-CN.md to match README.md"
    for command in re.findall(r"`((?:trio-|npx |make )[^`]+)`", english):
        assert command in chinese, command


DOC_RECIPES = [  # (doc, example, first and last function): the doc shows the tested code
    ("best-practices/sft.md", "08_multiturn_chat_sft.py", "chat_tokens_and_weights", "chat_datum"),
    (
        "references/rest-client.md",
        "09_newest_checkpoint.py",
        "all_training_runs",
        "newest_checkpoint",
    ),
    ("best-practices/async.md", "06_async_pipeline.py", "pipelined_async", "pipelined_async"),
]


@pytest.mark.parametrize(("doc", "example", "first", "last"), DOC_RECIPES)
def test_recipes_in_the_docs_are_the_tested_examples(doc, example, first, last) -> None:
    # tests/skill/test_examples.py runs the examples under trio-local and checks their output
    text = (ROOT / doc).read_text(encoding="utf-8")
    source = (ROOT / "examples" / example).read_text(encoding="utf-8")
    pattern = rf"((?:async )?def {first}\(.*?)\n\n\n(?:async )?def (?!{first}\b|{last}\b)"
    if first == last:
        pattern = rf"((?:async )?def {first}\(.*?)\n\n\n"
    functions = re.search(pattern, source, re.S)
    assert functions, f"{example} has no {first}"
    assert functions.group(1) in text, f"{doc} differs from {example}: copy the functions again"
