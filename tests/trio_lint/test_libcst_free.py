"""Detection never imports libcst (~0.25 s of every start): only applying or showing a fix does.

Rule modules import libcst under TYPE_CHECKING and inside their fix transforms; a `NodeEdit`
names its node kind as a string. These tests run in fresh processes, through the library API,
the flake8 plugin and the console script, so an `import libcst` that creeps back into a module
top (or a `cst.Call` passed as a kind) fails here.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.support.lint import TRIO_LINT
from trio_lint.rules import all_rules

LIBCST_IMPORT = re.compile(r"^import time:.*\|\s+libcst(\.|$)", re.MULTILINE)


def _write_invalid_examples(directory: Path) -> int:
    """Every rule's INVALID examples as files; returns how many."""
    count = 0
    for rule in all_rules():
        for number, example in enumerate(rule.INVALID):
            suffix = Path(example.path).suffix or ".py"
            name = f"{rule.code}_{number}{suffix}"
            (directory / name).write_text(textwrap.dedent(example.code), encoding="utf-8")
            count += 1
    return count


def _console(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    """The console script with `-X importtime` on (its report goes to stderr)."""
    return subprocess.run(
        [TRIO_LINT, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"},
    )


def _without_importtime(stderr: str) -> str:
    return "".join(
        line for line in stderr.splitlines(keepends=True) if not line.startswith("import time:")
    )


def test_library_and_flake8_plugin_lint_every_invalid_example_without_libcst(
    tmp_path: Path,
) -> None:
    script = textwrap.dedent(
        """\
        import ast, sys, textwrap
        import trio_lint
        from trio_lint import lint_source
        from trio_lint.integrations.flake8 import Flake8Checker
        from trio_lint.rules import all_rules

        findings = fixable = plugin = 0
        for rule in all_rules():
            for example in rule.INVALID:
                code = textwrap.dedent(example.code)
                config = {"select": [rule.code], "force-sdk": True, **example.config}
                found = lint_source(code, example.path, config)
                findings += len(found)
                fixable += sum(d.fix is not None for d in found)
                if example.path.endswith(".py") and rule.code != "PTR900":
                    checker = Flake8Checker(ast.parse(code), example.path, code.splitlines(True))
                    plugin += len(list(checker.run()))
        print(findings, fixable, plugin, "libcst" in sys.modules)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    findings, fixable, plugin, loaded = result.stdout.split()
    assert int(findings) > 100 and int(fixable) > 30 and int(plugin) > 50
    assert loaded == "False", "detection imported libcst"


def test_console_script_lints_and_reports_without_libcst(project: Path) -> None:
    examples = _write_invalid_examples(project)
    assert examples > 100
    for output in ("full", "concise", "github"):
        result = _console(
            "--no-cache", "--select", "PTR", "--force-sdk", "--output-format", output, ".",
            cwd=project,
        )  # fmt: skip
        assert result.returncode == 1, _without_importtime(result.stderr)
        assert LIBCST_IMPORT.search(result.stderr) is None, f"--output-format {output}"
    full = _console(
        "--no-cache", "--select", "PTR", "--force-sdk", "--statistics", ".", cwd=project
    )
    assert "[*]" in full.stdout  # fixable findings were described, libcst still not imported
    assert LIBCST_IMPORT.search(full.stderr) is None


def test_json_and_sarif_edits_need_libcst_only_when_a_finding_has_a_fix(project: Path) -> None:
    """The edits JSON and SARIF show are computed by libcst (the same pass that applies fixes):
    with a fixable finding it is imported and the edits are there; without one it is not."""
    (project / "fixable.py").write_text(
        "import pytrio as trio\np = trio.SamplingParams(max_new_tokens=3)\n"
    )
    (project / "unfixable.py").write_text(
        "import pytrio as trio\nout = trio.ServiceClient().create_sampling_client(model_path='x')\n"
    )
    fixable = _console("--no-cache", "--output-format", "json", "fixable.py", cwd=project)
    [record] = json.loads(fixable.stdout)
    assert record["fix"]["edits"][0]["content"] == "max_tokens"
    assert LIBCST_IMPORT.search(fixable.stderr) is not None
    unfixable = _console("--no-cache", "--output-format", "json", "unfixable.py", cwd=project)
    records = json.loads(unfixable.stdout)
    assert records and all(r["fix"] is None for r in records)
    assert LIBCST_IMPORT.search(unfixable.stderr) is None
    sarif = _console("--no-cache", "--output-format", "sarif", "fixable.py", cwd=project)
    assert json.loads(sarif.stdout)["runs"][0]["results"][0]["fixes"]
    assert LIBCST_IMPORT.search(sarif.stderr) is not None


def test_fix_still_imports_libcst_and_fixes(project: Path) -> None:
    (project / "bad.py").write_text(
        "import pytrio as trio\n"
        "s = trio.ServiceClient().create_sampling_client(base_model='m')\n"
        "r = s.sample(prompt=trio.ModelInput.from_ints([1]), num_samples=1,"
        " sampling_params={'max_tokens': 5}).result()\n"
    )
    result = _console("--no-cache", "--fix", "bad.py", cwd=project)
    assert "sampling_params=trio.SamplingParams(max_tokens=5)" in (project / "bad.py").read_text()
    assert LIBCST_IMPORT.search(result.stderr) is not None
