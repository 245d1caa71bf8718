"""The installable copy of the skill: `skills/pytrio/`, rendered from the root files.

The skill lives at the repository root (SKILL.md, references/, best-practices/, examples/), but
the `skills` CLI copies the whole folder that holds a SKILL.md, and for a root-level skill that is
the whole repository. The root SKILL.md is therefore marked `metadata.internal: true`, which the
CLI skips; it then finds `skills/pytrio/`, which holds the skill's files and nothing else. The
same folder is what the wheel ships for trio-mcp's `skill://` resources.
"""

from __future__ import annotations

import re
from pathlib import Path

COPY_DIR = Path("skills") / "pytrio"
FOLDERS = ("references", "best-practices", "examples")
# The root SKILL.md's marker (and the comment above it), dropped from the installable copy.
INTERNAL_MARKER = re.compile(
    r"^# The installable copy.*?\nmetadata:\n  internal: true\n", re.M | re.S
)


def skill_files(root: Path) -> list[Path]:
    """The skill's files at the root, relative to it: SKILL.md and the three folders' files
    ([] for a root without a SKILL.md)."""
    if not (root / "SKILL.md").is_file():
        return []
    files = [Path("SKILL.md")]
    for folder in FOLDERS:
        base = root / folder
        if base.is_dir():
            files.extend(
                path.relative_to(root)
                for path in sorted(base.iterdir())
                if path.is_file() and not path.name.startswith(".")
            )
    return files


def copy_text(relative: Path, text: str) -> str:
    """A root file's text as it appears in the copy: SKILL.md loses its internal marker."""
    if relative == Path("SKILL.md"):
        stripped = INTERNAL_MARKER.sub("", text, count=1)
        if stripped == text:
            raise ValueError("SKILL.md: the `metadata: internal: true` marker is missing")
        return stripped
    return text


def expected_copy(root: Path, rendered: dict[Path, str]) -> dict[Path, str]:
    """Every file of `skills/pytrio/` with its content; root files are taken as rendered now."""
    out: dict[Path, str] = {}
    for relative in skill_files(root):
        source = root / relative
        text = rendered.get(source)
        if text is None:
            text = source.read_text(encoding="utf-8")
        out[root / COPY_DIR / relative] = copy_text(relative, text)
    return out


def extra_files(root: Path, expected: dict[Path, str]) -> list[Path]:
    """Files in `skills/pytrio/` that no longer have a root original."""
    base = root / COPY_DIR
    if not base.is_dir():
        return []
    return sorted(
        path
        for path in base.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path not in expected
    )
