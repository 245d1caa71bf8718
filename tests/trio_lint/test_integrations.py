"""SARIF validity, the flake8 plugin and the pre-commit hooks, each run as the real tool."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from tests.support.lint import BAD, FIXED, run_cli

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

# The parts of the SARIF 2.1.0 schema (sarif-schema-2.1.0.json, OASIS) that a producer must meet:
# required properties and value constraints of sarifLog, run, tool, toolComponent,
# reportingDescriptor, result, location, physicalLocation, artifactLocation, region, fix,
# artifactChange and replacement. No package on PyPI ships the schema and tests never download.
_MESSAGE = {
    "type": "object",
    "anyOf": [{"required": ["text"]}, {"required": ["id"]}],
    "properties": {"text": {"type": "string"}},
}
_REGION = {
    "type": "object",
    "properties": {
        "startLine": {"type": "integer", "minimum": 1},
        "startColumn": {"type": "integer", "minimum": 1},
        "endLine": {"type": "integer", "minimum": 1},
        "endColumn": {"type": "integer", "minimum": 1},
    },
}
_ARTIFACT_LOCATION = {
    "type": "object",
    "properties": {"uri": {"type": "string", "format": "uri-reference"}},
}
SARIF_SCHEMA = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "$schema": {"type": "string", "format": "uri"},
        "version": {"enum": ["2.1.0"]},
        "runs": {
            "type": ["array", "null"],
            "items": {
                "type": "object",
                "required": ["tool"],
                "properties": {
                    "tool": {
                        "type": "object",
                        "required": ["driver"],
                        "properties": {
                            "driver": {
                                "type": "object",
                                "required": ["name"],
                                "properties": {
                                    "name": {"type": "string"},
                                    "version": {"type": "string"},
                                    "rules": {
                                        "type": "array",
                                        "uniqueItems": True,
                                        "items": {
                                            "type": "object",
                                            "required": ["id"],
                                            "properties": {
                                                "id": {"type": "string"},
                                                "shortDescription": _MESSAGE,
                                                "fullDescription": _MESSAGE,
                                                "defaultConfiguration": {
                                                    "type": "object",
                                                    "properties": {
                                                        "level": {
                                                            "enum": [
                                                                "none",
                                                                "note",
                                                                "warning",
                                                                "error",
                                                            ]
                                                        },
                                                        "enabled": {"type": "boolean"},
                                                    },
                                                },
                                            },
                                        },
                                    },
                                },
                            }
                        },
                    },
                    "results": {
                        "type": ["array", "null"],
                        "items": {
                            "type": "object",
                            "required": ["message"],
                            "properties": {
                                "ruleId": {"type": "string"},
                                "ruleIndex": {"type": "integer", "minimum": -1},
                                "level": {"enum": ["none", "note", "warning", "error"]},
                                "message": _MESSAGE,
                                "locations": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "properties": {
                                            "physicalLocation": {
                                                "type": "object",
                                                "anyOf": [
                                                    {"required": ["address"]},
                                                    {"required": ["artifactLocation"]},
                                                ],
                                                "properties": {
                                                    "artifactLocation": _ARTIFACT_LOCATION,
                                                    "region": _REGION,
                                                },
                                            }
                                        },
                                    },
                                },
                                "fixes": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "required": ["artifactChanges"],
                                        "properties": {
                                            "description": _MESSAGE,
                                            "artifactChanges": {
                                                "type": "array",
                                                "minItems": 1,
                                                "items": {
                                                    "type": "object",
                                                    "required": [
                                                        "artifactLocation",
                                                        "replacements",
                                                    ],
                                                    "properties": {
                                                        "artifactLocation": _ARTIFACT_LOCATION,
                                                        "replacements": {
                                                            "type": "array",
                                                            "minItems": 1,
                                                            "items": {
                                                                "type": "object",
                                                                "required": ["deletedRegion"],
                                                                "properties": {
                                                                    "deletedRegion": _REGION,
                                                                    "insertedContent": {
                                                                        "type": "object",
                                                                        "properties": {
                                                                            "text": {
                                                                                "type": "string"
                                                                            }
                                                                        },
                                                                    },
                                                                },
                                                            },
                                                        },
                                                    },
                                                },
                                            },
                                        },
                                    },
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}


def test_sarif_is_valid_and_complete(project: Path) -> None:
    (project / "bad.py").write_text(BAD)
    result = run_cli("bad.py", "--output-format", "sarif", cwd=project)
    assert result.code == 1
    log = json.loads(result.out)
    jsonschema.validate(log, SARIF_SCHEMA, format_checker=jsonschema.FormatChecker())
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    results = run["results"]
    assert [r["ruleId"] for r in results] == ["PTR202", "PTR201", "PTR301"]
    for item in results:
        assert rules[item["ruleIndex"]]["id"] == item["ruleId"]
    region = results[0]["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 3, "startColumn": 24, "endLine": 3, "endColumn": 31}
    replacement = results[0]["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert replacement["insertedContent"] == {"text": "learning_rate"}
    # A file that breaks the schema must fail validation (the schema above is not vacuous).
    broken = json.loads(result.out)
    del broken["runs"][0]["tool"]["driver"]["name"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, SARIF_SCHEMA)


def test_flake8_reports_the_same_findings(project: Path) -> None:
    (project / "bad.py").write_text(BAD)
    proc = subprocess.run(
        [str(BIN / "flake8"), "--select", "PTR", "bad.py"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.splitlines() == [
        "bad.py:3:24: PTR202 `AdamParams` has no `lr`; the PyTRIO name is `learning_rate`",
        "bad.py:4:30: PTR201 `SamplingParams` has no `max_new_tokens`; the PyTRIO name is"
        " `max_tokens`",
        "bad.py:5:32: PTR301 `-100` in `model_input`: PyTRIO rejects it as an out-of-vocabulary"
        " token",
    ]
    (project / "bad.py").write_text(BAD.replace("[-100, 1])", "[-100, 1])  # noqa: PTR301"))
    quiet = subprocess.run(
        [str(BIN / "flake8"), "--select", "PTR301", "bad.py"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert quiet.returncode == 0 and quiet.stdout == ""


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.mark.slow
def test_pre_commit_hooks_fail_then_fix(tmp_path: Path) -> None:
    """Real `pre-commit run` with a user's `.pre-commit-config.yaml` naming a clone of this
    repository at its HEAD commit, as a user pins a tag: pre-commit builds the hook env by
    pip-installing that clone (so this needs PyPI for the dependencies), once for both hooks."""
    clone = tmp_path / "hook-repo"
    _git("clone", "-q", "--no-hardlinks", str(ROOT), str(clone), cwd=tmp_path)
    rev = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True, check=True
    ).stdout.strip()
    user = tmp_path / "user"
    user.mkdir()
    _git("init", "-q", cwd=user)
    (user / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {clone}\n  rev: {rev}\n  hooks:\n"
        "  - id: trio-lint\n  - id: trio-lint-fix\n"
    )
    (user / "train.py").write_text(BAD)
    _git("add", "train.py", ".pre-commit-config.yaml", cwd=user)
    env_home = tmp_path / "pre-commit-home"
    env = {
        "PATH": f"{BIN}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PRE_COMMIT_HOME": str(env_home),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    pre_commit = shutil.which("pre-commit", path=str(BIN)) or str(BIN / "pre-commit")

    def run_hook(hook: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [pre_commit, "run", hook, "--all-files", "--color", "never"],
            cwd=user,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )

    lint = run_hook("trio-lint")
    assert lint.returncode == 1, lint.stdout + lint.stderr
    assert "train.py:3:24: PTR202" in lint.stdout
    assert (user / "train.py").read_text() == BAD
    fix = run_hook("trio-lint-fix")
    assert fix.returncode == 1, fix.stdout + fix.stderr  # files modified + the -100 remains
    assert (user / "train.py").read_text() == FIXED
    (user / "train.py").write_text(FIXED.replace("[-100, 1]", "[5, 1]"))
    clean = run_hook("trio-lint")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    # One hook environment served the three runs.
    envs = [path for path in env_home.iterdir() if path.is_dir() and path.name.startswith("repo")]
    assert len(envs) == 1, envs
