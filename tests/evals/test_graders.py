"""The offline grader semantics (tests/evals/graders.py) and the suite's public description."""

import re
from pathlib import Path

import pytest

from tests.evals.graders import Grader, judge

ROOT = Path(__file__).resolve().parents[2]


def regex(pattern: str, **meta) -> Grader:
    target = {"source": "file", "path": "out.txt"}
    return Grader("g", "regex", {"type": "regex", "target": target, "pattern": pattern, **meta})


@pytest.mark.parametrize(
    ("grader", "expected"),
    [
        (regex(r"^step 0"), False),  # no m flag: ^ is the start of the file only
        (regex(r"^step 0", flags="m"), True),
        (regex(r"STEP", flags="i"), True),
        (regex(r"STEP"), False),
        (regex(r"step", match="count:2"), True),
        (regex(r"step", match="count:3"), False),
        (regex(r"loss nan", match="not_contains"), True),
        (regex(r"loss 1", match="not_contains"), False),
        (regex(r"first.last", flags="s"), True),
        (regex(r"first.last"), False),
    ],
)
def test_regex_semantics(tmp_path, grader, expected):
    (tmp_path / "out.txt").write_text("header\nstep 0 loss 1.5 first\nlast\nstep 1 loss 0.9\n")
    assert judge(grader, tmp_path) is expected


def test_a_missing_target_file_fails_every_match_kind(tmp_path):
    for match in ("contains", "not_contains", "count:0"):
        assert judge(regex("x", match=match), tmp_path) is False


def test_file_exists_semantics(tmp_path):
    (tmp_path / "a.txt").write_text("")
    assert judge(Grader("g", "file_exists", {"path": "a.txt"}), tmp_path)
    assert not judge(Grader("g", "file_exists", {"path": "b.txt"}), tmp_path)
    assert judge(Grader("g", "file_exists", {"path": "b.txt", "exists": False}), tmp_path)


def test_bad_flags_and_match_are_refused(tmp_path):
    (tmp_path / "out.txt").write_text("x")
    with pytest.raises(ValueError, match="flags"):
        judge(regex("x", flags="y"), tmp_path)
    with pytest.raises(ValueError, match="match must be"):
        judge(regex("x", match="some"), tmp_path)


def test_the_reference_page_lists_every_case():
    page = (ROOT / "references" / "plugin-evals.md").read_text()
    listed = re.findall(r"^\| `([\w.-]+)` \| ", page, re.M)
    cases = sorted(path.parent.name for path in (ROOT / "evals").glob("*/prompt.md"))
    assert sorted(listed[: len(cases)]) == cases


def test_reads_only_names_the_one_file_a_grader_reads():
    assert regex("x").reads_only({"out.txt"})
    assert not regex("x").reads_only({"lint.txt"})
    assert Grader("g", "file_exists", {"path": "a.txt"}).reads_only({"a.txt", "b.txt"})
    assert not Grader("g", "tool_used", {"tool": "Skill"}).reads_only({"a.txt"})
    assert not Grader("g", "regex", {"target": {"source": "transcript"}}).reads_only({"a.txt"})
