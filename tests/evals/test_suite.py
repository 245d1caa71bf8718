"""The eval suite in evals/, tested offline: no model is called.

Static checks: every case has a prompt with the allowed front matter, the two check commands, and
the graders the suite relies on. Then, for each case with solutions under solutions/<case>/, each
solution runs the two checks exactly as the case's prompt tells the agent (its ```bash block, in a
fresh directory, with a fresh trio-local data dir), and the case's free file graders are judged on
the files it leaves: a reference passes every one, a wrong solution fails the graders meant to
catch it (CAUGHT_BY).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.evals.graders import front_matter, judge, load_graders

ROOT = Path(__file__).resolve().parents[2]
EVALS = ROOT / "evals"
SOLUTIONS = Path(__file__).parent / "solutions"
CASES = sorted(path.parent for path in EVALS.glob("*/prompt.md"))
PROMPT_KEYS = {
    "schema_version", "name", "description", "tags", "plugins", "runs", "expected_outcome",
    "model", "max_turns", "timeout_seconds", "allowed_tools", "disallowed_tools",
    "artifact_publish", "append_system_prompt", "env",
}  # fmt: skip
GRADER_KINDS = {"regex", "tool_order", "tool_used", "file_exists", "llm", "baseline"}

# wrong solution -> the graders meant to catch it (each must fail; others may fail too).
CAUGHT_BY = {
    ("sft-chat-first", "wrong_unshifted_target"): {"lint_clean", "check_clean"},
    ("sft-chat-first", "wrong_minus_100_mask"): {"check_clean", "lint_clean"},
    ("dpo-custom-loss", "wrong_missing_result"): {"lint_clean"},
    ("multi-turn-chat", "wrong_prompt_trained"): {"check_clean"},
    ("grpo-group-advantages", "wrong_weights_in_policy_loss"): {"lint_clean"},
    ("async-pipeline-resume", "wrong_serial_pipeline"): {"src_pipelined"},
    ("checkpoints-list-download", "wrong_newest_by_list_order"): {"out_newest"},
    ("checkpoints-list-download", "wrong_missing_result"): {
        "out_listed",
        "wrote_newest_tar",
        "lint_clean",
    },
    ("migrate-0.1-script", "wrong_old_metric_key"): {"lint_clean"},
    ("migrate-0.1-script", "wrong_ignore_eos"): {"lint_clean", "out_sampled", "sampled_service"},
    ("choose-model", "wrong_model_from_memory"): {"out_listed", "out_chosen"},
}


def prompt_of(case: Path) -> tuple[dict, str]:
    return front_matter((case / "prompt.md").read_text())


def check_commands(case: Path) -> str:
    (block,) = re.findall(r"```bash\n(.*?)```", prompt_of(case)[1], re.S)
    return block


def script_name(case: Path) -> str:
    match = re.search(r"^trio-lint (\S+) > lint\.txt 2>&1$", check_commands(case), re.M)
    assert match, f"{case.name}: the prompt must run trio-lint on the script into lint.txt"
    return match.group(1)


def test_the_suite_covers_the_user_tasks():
    assert len(CASES) >= 8
    assert {case.name for case in CASES} >= {
        "sft-chat-first", "multi-turn-chat", "async-pipeline-resume", "grpo-group-advantages",
        "dpo-custom-loss", "checkpoints-list-download", "migrate-0.1-script", "choose-model",
    }  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_case_format(case):
    meta, _ = prompt_of(case)
    assert set(meta) <= PROMPT_KEYS, set(meta) - PROMPT_KEYS
    assert meta["name"] == case.name and meta["max_turns"] <= 200
    assert meta["timeout_seconds"] <= 3600
    assert {"Bash", "Write", "Skill"} <= set(meta["allowed_tools"])
    commands = check_commands(case).splitlines()
    script = script_name(case)
    assert commands[1].startswith("trio-local run --check-report check.json -- ")
    assert commands[1].endswith(" > run.log 2>&1") and script in commands[1]
    graders = {grader.name: grader for grader in load_graders(case)}
    assert {grader.kind for grader in graders.values()} <= GRADER_KINDS
    assert sum(grader.kind == "llm" for grader in graders.values()) <= 1
    # A script that does nothing cannot pass: the linter ran clean, the service saw training
    # with no data mistakes, and the run printed what the task asks for.
    for name in ("lint_clean", "check_clean", "trained", f"wrote_{script.replace('.', '_')}"):
        assert name in graders and graders[name].reads_files_only, name
    assert any(name.startswith("out_") for name in graders)
    assert graders["skill_used"].meta == {
        "type": "tool_used", "tool": "Skill", "input_match": "pytrio", "min": 1,
    }  # fmt: skip
    for grader in graders.values():
        if grader.kind == "regex":
            re.compile(grader.meta["pattern"])


SOLVED = [
    (case, solution.stem)
    for case in CASES
    for solution in sorted((SOLUTIONS / case.name).glob("*.py"))
    if (SOLUTIONS / case.name).is_dir()
]


def test_every_wrong_solution_names_the_graders_meant_for_it():
    wrong = {(case.name, stem) for case, stem in SOLVED if stem != "reference"}
    assert wrong == set(CAUGHT_BY)
    for case, _ in SOLVED:
        assert (SOLUTIONS / case.name / "reference.py").is_file()


@pytest.fixture(scope="module")
def run_checks(tmp_path_factory):
    """Runs a solution's checks as the prompt says; returns the directory they left files in."""
    bin_dir = Path(sys.executable).parent

    def run(case: Path, solution: str, *, lint_only: bool = False) -> Path:
        workdir = tmp_path_factory.mktemp(f"{case.name}-{solution}")
        shutil.copy(SOLUTIONS / case.name / f"{solution}.py", workdir / script_name(case))
        env = {
            **os.environ,
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "TRIO_LOCAL_DATA_DIR": str(workdir / ".trio-local"),
        }
        # trio-local's own cache (stand-in weights, tokenizers) is the one every other
        # trio-local test shares, as a user's runs share it: a fresh cache per worker made the
        # first run of each worker build the stand-in and the tokenizers again (~10 CPU-s).
        env.pop("PYTRIO_API_KEY", None)
        commands = check_commands(case).splitlines()
        for command in commands[:1] if lint_only else commands:
            # Each command is run as written; a failing check is a verdict, not an error.
            subprocess.run(["bash", "-c", command], cwd=workdir, env=env, timeout=900, check=False)
        return workdir

    return run


@pytest.mark.slow
@pytest.mark.parametrize("case, solution", SOLVED, ids=lambda value: getattr(value, "name", value))
def test_solution_meets_its_graders(case, solution, run_checks):
    graders = [grader for grader in load_graders(case) if grader.reads_files_only]
    # A wrong solution whose catching graders read only trio-lint's output or the script itself
    # is judged without the trio-local run (the second check command), which cannot change them.
    lint_only = solution != "reference" and all(
        grader.reads_only({"lint.txt", script_name(case)})
        for grader in graders
        if grader.name in CAUGHT_BY[(case.name, solution)]
    )
    workdir = run_checks(case, solution, lint_only=lint_only)
    verdicts = {grader.name: judge(grader, workdir) for grader in graders}
    log = (workdir / "run.log").read_text(errors="replace")[-2000:] if not lint_only else "-"
    lint = (workdir / "lint.txt").read_text(errors="replace")[-1000:]
    if solution == "reference":
        failed = sorted(name for name, passed in verdicts.items() if not passed)
        assert failed == [], f"{failed}\nlint.txt:\n{lint}\nrun.log:\n{log}"
    else:
        meant = CAUGHT_BY[(case.name, solution)]
        missed = sorted(name for name in meant if verdicts[name])
        assert missed == [], f"{missed} passed\nlint.txt:\n{lint}\nrun.log:\n{log}"
