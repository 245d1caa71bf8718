"""The free graders of a `claude plugin eval` case, applied to a run's working directory.

Parses evals/<case>/graders/*.md (YAML front matter; `type:` regex | file_exists | tool_used |
llm ...) and judges the two kinds that read only files: `regex` with a file target (JS-style
flags, `match:` contains | not_contains | count:N) and `file_exists`. A regex whose file is
missing fails whatever its `match:`, as there is nothing to judge.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

JS_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "u": 0, "g": 0}
FILE_KINDS = ("regex", "file_exists")


@dataclass(frozen=True)
class Grader:
    name: str
    kind: str
    meta: dict[str, Any] = field(hash=False)
    body: str = ""

    @property
    def reads_files_only(self) -> bool:
        if self.kind == "file_exists":
            return True
        target = self.meta.get("target")
        return self.kind == "regex" and isinstance(target, dict) and target.get("source") == "file"

    def reads_only(self, names: set[str]) -> bool:
        """Whether this is a file grader whose verdict depends on no file but those named."""
        if not self.reads_files_only:
            return False
        path = self.meta["path"] if self.kind == "file_exists" else self.meta["target"]["path"]
        return path in names


def front_matter(text: str) -> tuple[dict[str, Any], str]:
    match = re.match(r"---\n(.*?)\n---\n?(.*)", text, re.S)
    if match is None:
        raise ValueError("no YAML front matter")
    return yaml.safe_load(match.group(1)) or {}, match.group(2)


def load_graders(case: Path) -> list[Grader]:
    graders = []
    for path in sorted((case / "graders").glob("*.md")):
        meta, body = front_matter(path.read_text())
        graders.append(Grader(path.stem, meta["type"], meta, body.strip()))
    return graders


def compile_pattern(meta: dict[str, Any], body: str) -> re.Pattern[str]:
    flags = 0
    for flag in str(meta.get("flags", "")):
        if flag not in JS_FLAGS:
            raise ValueError(f"flags: {flag!r} has no Python equivalent")
        flags |= JS_FLAGS[flag]
    return re.compile(meta.get("pattern") or body, flags)


def judge(grader: Grader, workdir: Path) -> bool:
    if grader.kind == "file_exists":
        return (workdir / grader.meta["path"]).exists() == grader.meta.get("exists", True)
    if not grader.reads_files_only:
        raise ValueError(f"{grader.name}: not a file grader")
    path = workdir / grader.meta["target"]["path"]
    if not path.is_file():
        return False
    text = path.read_text(errors="replace")
    found = len(compile_pattern(grader.meta, grader.body).findall(text))
    match = str(grader.meta.get("match", "contains"))
    if match == "contains":
        return found > 0
    if match == "not_contains":
        return found == 0
    if match.startswith("count:"):
        return found == int(match.removeprefix("count:"))
    raise ValueError(f"{grader.name}: match must be contains | not_contains | count:N")
