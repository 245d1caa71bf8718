"""skills/pytrio/ is the root skill, file for file: what `npx skills add` installs.

The root SKILL.md carries `metadata.internal: true` so the skills CLI skips the root-level skill
(which would copy the whole repository) and installs skills/pytrio/ instead; the copy is the
same text without that marker. `make docs` (python -m docgen.render) writes the copy.
"""

from pathlib import Path

import yaml

from docgen import skill_copy

ROOT = Path(__file__).resolve().parents[2]
COPY = ROOT / skill_copy.COPY_DIR


def frontmatter(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8").split("---\n")[1])


def installed_tree(folder: Path) -> set[str]:
    return {
        path.relative_to(folder).as_posix()
        for path in folder.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }


def test_the_copy_holds_exactly_the_skill_files() -> None:
    expected = {path.as_posix() for path in skill_copy.skill_files(ROOT)}
    assert installed_tree(COPY) == expected, "run `make docs` to refresh skills/pytrio/"
    assert {"SKILL.md", "references/rest-client.md", "examples/01_train_sft.py"} <= expected
    assert not {p for p in expected if p.split("/")[0] not in {"SKILL.md", *skill_copy.FOLDERS}}


def test_the_copy_equals_the_root_files() -> None:
    for relative in skill_copy.skill_files(ROOT):
        original = (ROOT / relative).read_text(encoding="utf-8")
        copied = (COPY / relative).read_text(encoding="utf-8")
        if relative.name == "SKILL.md":
            assert copied == skill_copy.copy_text(relative, original)
        else:
            assert copied == original, f"{relative}: run `make docs`"


def test_only_the_root_skill_is_hidden_from_the_skills_cli() -> None:
    root, copy = frontmatter(ROOT / "SKILL.md"), frontmatter(COPY / "SKILL.md")
    assert root["metadata"] == {"internal": True}  # the CLI compares with `=== true`
    assert "metadata" not in copy
    assert {k: v for k, v in root.items() if k != "metadata"} == copy
    body = (ROOT / "SKILL.md").read_text(encoding="utf-8").split("---\n", 2)[2]
    assert (COPY / "SKILL.md").read_text(encoding="utf-8").split("---\n", 2)[2] == body


def test_a_root_skill_md_without_the_marker_is_an_error(tmp_path) -> None:
    import pytest

    with pytest.raises(ValueError, match="internal"):
        skill_copy.copy_text(Path("SKILL.md"), "---\nname: pytrio\n---\nbody\n")
