"""[tool.trio-lint] configuration, file discovery, noqa and the cache, through `main(argv)` in
this process; the process pool, which a run starts from its own process, through the console
script."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.lint import BAD, CLEAN, run_cli, run_main

TINKER = "import tinker\np = tinker.types.SamplingParams(max_new_tokens=8)\n"


def codes(project: Path, *args: str) -> list[tuple[str, str]]:
    out = run_main(*args, "--output-format", "json", "--no-cache", cwd=project).out
    return [(Path(r["filename"]).name, r["code"]) for r in json.loads(out)]


def write_config(project: Path, body: str) -> None:
    (project / "pyproject.toml").write_text(f"[project]\nname = 'p'\n\n[tool.trio-lint]\n{body}")


def test_select_ignore_and_per_file_ignores(project: Path) -> None:
    (project / "tests").mkdir()
    (project / "tests" / "t.py").write_text(BAD)
    (project / "a.py").write_text(BAD)
    write_config(
        project,
        'select = ["PTR2", "PTR3"]\nignore = ["PTR202"]\n\n'
        '[tool.trio-lint.per-file-ignores]\n"tests/**" = ["PTR301"]\n',
    )
    assert sorted(codes(project, ".")) == [
        ("a.py", "PTR201"),
        ("a.py", "PTR301"),
        ("t.py", "PTR201"),
    ]


def test_sdk_modules_makes_rules_apply_to_tinker(project: Path) -> None:
    (project / "t.py").write_text(TINKER)
    assert codes(project, "t.py") == []
    write_config(project, 'sdk-modules = ["pytrio", "tinker"]\n')
    assert codes(project, "t.py") == [("t.py", "PTR201")]
    (project / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    assert codes(project, "t.py", "--sdk-modules", "pytrio,tinker") == [("t.py", "PTR201")]
    write_config(project, 'sdk-modules = ["pytrio", "tinker"]\n')
    # PyTRIO-only rules (the import convention) still ignore Tinker code.
    (project / "f.py").write_text("from tinker import Datum\n")
    assert codes(project, "f.py", "--select", "PTR001") == []


def test_unknown_key_and_code_errors_name_them(project: Path) -> None:
    (project / "a.py").write_text(CLEAN)
    write_config(project, 'selec = ["PTR2"]\n')
    bad_key = run_main("a.py", cwd=project)
    assert bad_key.code == 2
    assert "unknown key `selec`" in bad_key.err and "Did you mean `select`?" in bad_key.err
    write_config(project, 'ignore = ["PTR2", "XYZ123"]\n')
    bad_code = run_main("a.py", cwd=project)
    assert bad_code.code == 2 and "`XYZ123` in `ignore`" in bad_code.err
    write_config(project, 'sdk-modules = "pytrio"\n')
    bad_type = run_main("a.py", cwd=project)
    assert bad_type.code == 2 and "sdk-modules" in bad_type.err


@pytest.mark.parametrize(
    ("toml", "key", "hint"),
    [
        ('select = "PTR1"', "select", 'such as `["PTR1"]`'),
        ("ignore = [1]", "ignore", "list of strings"),
        ("sdk-modules = [['pytrio']]", "sdk-modules", "list of strings"),
        ("per-file-ignores = ['tests/*']", "per-file-ignores", "table of lists"),
        ("per-file-ignores = {'tests/*' = 'PTR1'}", "per-file-ignores", "under `tests/*`"),
        ('force-sdk = "yes"', "force-sdk", "`true` or `false`"),
        ('cache-dir = ""', "cache-dir", "non-empty string"),
        ("target-version = 0.2", "target-version", "non-empty string"),
        ('target-version = "1.0"', "target-version", "0.2.8, 0.2.9) or a release line"),
    ],
)
def test_a_bad_value_names_its_key_and_the_expected_shape(
    project: Path, toml: str, key: str, hint: str
) -> None:
    (project / "pyproject.toml").write_text(f"[tool.trio-lint]\n{toml}\n")
    (project / "a.py").write_text(BAD)
    got = run_main("a.py", cwd=project)
    assert got.code == 2 and got.out == ""
    assert f"invalid value for `{key}`" in got.err and hint in got.err, got.err
    assert "Traceback" not in got.err


def test_explicit_config_file(project: Path) -> None:
    (project / "a.py").write_text(BAD)
    other = project / "lint.toml"
    other.write_text('select = ["PTR301"]\n')
    assert codes(project, "a.py", "--config", str(other)) == [("a.py", "PTR301")]
    missing = run_main("a.py", "--config", "nope.toml", cwd=project)
    assert missing.code == 2 and "nope.toml" in missing.err


def test_discovery_honours_gitignore_and_excludes(project: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    for relative in (
        "src/a.py",
        "gen/g.py",
        ".venv/lib/v.py",
        "build/b.py",
        "skip/s.py",
        "src/n.pyi",
    ):
        path = project / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(BAD)
    (project / ".gitignore").write_text("gen/\n")
    found = {name for name, _ in codes(project, ".")}
    assert found == {"a.py", "n.pyi", "s.py"}
    assert {n for n, _ in codes(project, ".", "--extend-exclude", "skip")} == {"a.py", "n.pyi"}
    # A pattern with a slash matches a file by its path from the project root, as in ruff.
    assert {n for n, _ in codes(project, ".", "--extend-exclude", "src/n.pyi")} == {"a.py", "s.py"}
    assert {n for n, _ in codes(project, "src", "--extend-exclude", "src/a.py")} == {"n.pyi"}
    # --exclude replaces the defaults (.venv, build, ...); .gitignore still applies.
    assert {n for n, _ in codes(project, ".", "--exclude", "src")} == {"s.py", "v.py", "b.py"}
    # Explicitly named files are always linted, unless --force-exclude (pre-commit).
    assert {n for n, _ in codes(project, "gen/g.py")} == {"g.py"}
    assert codes(project, "build/b.py", "--force-exclude") == []


def test_files_without_the_sdk_are_skipped_unless_forced(project: Path) -> None:
    code = "loss = tc.forward_backward(batch).metrics\n"  # no SDK import: never parsed
    (project / "a.py").write_text(code)
    assert codes(project, "a.py") == []
    assert codes(project, "a.py", "--force-sdk") == [("a.py", "PTR101")]


def test_noqa_codes_bare_add_noqa_and_unused(project: Path) -> None:
    target = project / "a.py"
    target.write_text(
        "import pytrio as trio\n"
        "adam = trio.AdamParams(lr=1e-4)  # noqa: PTR202\n"
        "p = trio.SamplingParams(max_new_tokens=4)  # NOQA\n"
        "x = trio.ModelInput.from_ints([-100])  # noqa: PTR201\n"
        "y = trio.AdamParams(learning_rate=1)  # noqa: PTR202, E501\n"
    )
    assert codes(project, "a.py") == [("a.py", "PTR301")]
    unused = run_main(
        "a.py", "--extend-select", "PTR902", "--output-format", "concise", cwd=project
    )
    lines = unused.out.splitlines()
    assert "a.py:4:40: PTR902 [*] Unused `noqa` directive (PTR201)" in lines
    assert "a.py:5:39: PTR902 [*] Unused `noqa` directive (PTR202)" in lines
    run_main("a.py", "--extend-select", "PTR902", "--fix", cwd=project)
    text = target.read_text().splitlines()
    assert text[3] == "x = trio.ModelInput.from_ints([-100])"
    assert text[4] == "y = trio.AdamParams(learning_rate=1)  # noqa: E501"
    added = run_main("a.py", "--add-noqa", cwd=project)
    assert added.code == 0
    assert (
        target.read_text().splitlines()[3]
        == "x = trio.ModelInput.from_ints([-100])  # noqa: PTR301"
    )
    assert run_main("a.py", cwd=project).code == 0


def test_cache_is_keyed_on_content(project: Path) -> None:
    from trio_lint.run.cache import read_store, write_store

    target = project / "a.py"
    target.write_text(BAD)
    first = run_main("a.py", "--output-format", "concise", cwd=project).out
    cache_dir = project / ".trio_lint_cache"
    cache_files = [p for p in cache_dir.glob("*.cache") if not p.name.startswith("run-")]
    assert len(cache_files) == 1
    assert (cache_dir / ".gitignore").read_text().endswith("*\n")
    # Prove the second run reads the cache: doctor the cached message and see it come back.
    entries = read_store(cache_files[0])
    (entry,) = entries.values()
    entry[1][0]["message"] = "from the cache"
    write_store(cache_dir, cache_files[0], entries)
    assert "from the cache" in run_main("a.py", "--output-format", "concise", cwd=project).out
    assert run_main("a.py", "--output-format", "concise", "--no-cache", cwd=project).out == first
    target.write_text(BAD + "\n")  # new content: the stale entry is not used
    assert "from the cache" not in run_main("a.py", "--output-format", "concise", cwd=project).out


def test_many_files_use_the_pool_and_stay_sorted(project: Path) -> None:
    for number in range(40):
        (project / f"m{number:02}.py").write_text(BAD if number % 3 else CLEAN)
    # The pool forks the process that runs trio-lint: a real one, not this test worker.
    pooled = run_cli(".", "--output-format", "concise", "--no-cache", "--jobs", "2", cwd=project)
    serial = run_main(".", "--output-format", "concise", "--no-cache", "--jobs", "1", cwd=project)
    assert pooled.out == serial.out
    assert pooled.out.count("PTR202") == 26
