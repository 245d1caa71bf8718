"""Version awareness through the console script: `target-version`, the 0.1 -> 0.2 migration guide,
`--force-sdk`, and Tinker (`sdk-modules`) with PyTRIO-only rules kept off."""

from __future__ import annotations

import importlib.metadata
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from trio_lint import lint_source
from trio_lint.rules import all_rules, select_rules
from trio_lint.settings.config import LintConfig

TRIO_LINT = str(Path(sys.executable).parent / "trio-lint")
LEGACY = Path(__file__).parent / "data" / "legacy_0_1_train.py"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TRIO_LINT, "--no-cache", *args], cwd=cwd, capture_output=True, text=True, check=False
    )


def findings(proc: subprocess.CompletedProcess[str]) -> list[dict]:
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture
def legacy(tmp_path: Path) -> Path:
    target = tmp_path / "train.py"
    shutil.copy(LEGACY, target)
    return target


def test_default_target_version_is_the_installed_sdk() -> None:
    assert LintConfig().target_version == importlib.metadata.version("pytrio")


def test_migration_guide_names_every_removed_api_with_its_replacement(legacy: Path) -> None:
    proc = run("--target-version", "0.2", "--output-format", "json", legacy.name, cwd=legacy.parent)
    found = findings(proc)
    by_line = {(item["location"]["row"], item["code"]): item["message"] for item in found}
    source = legacy.read_text().splitlines()

    def line_of(text: str) -> int:
        return next(n for n, line in enumerate(source, 1) if text in line)

    expected = {
        (line_of("trainable_token_indices"), "PTR004"): "train_unembed",
        (line_of("lora_path"), "PTR004"): "create_training_client_from_state",
        (line_of('"loss:sum"'), "PTR308"): "loss_sum",
        (line_of("save_weights_and_get_sampling_client"), "PTR005"): "save_weights_for_sampler",
        (line_of("ignore_eos"), "PTR004"): "max_tokens",
        (line_of("list_weights"), "PTR003"): "list_user_checkpoints",
        (line_of("get_archive_url"), "PTR003"): "get_checkpoint_archive_url",
    }
    for key, replacement in expected.items():
        assert key in by_line, (key, sorted(by_line))
        assert replacement in by_line[key], by_line[key]
    assert proc.returncode == 1


def test_migration_fixes_what_is_safe(legacy: Path) -> None:
    before = legacy.read_text()
    proc = run(
        "--target-version",
        "0.2",
        "--fix",
        "--output-format",
        "json",
        legacy.name,
        cwd=legacy.parent,
    )
    remaining = {item["code"] for item in findings(proc)}
    after = legacy.read_text()
    assert '"loss_sum"' in after and '"loss:sum"' not in after
    assert "ignore_eos" not in after  # ignore_eos=False: removing it is safe
    assert "trainable_token_indices" in after  # unsafe: needs --unsafe-fixes
    assert "lora_path" in after and "list_weights" in after  # no fix: reported only
    assert {"PTR003", "PTR004", "PTR005"} <= remaining
    assert after.count("\n") == before.count("\n")  # edits inside lines; the layout is kept
    proc = run("--target-version", "0.2", "--fix", "--unsafe-fixes", legacy.name, cwd=legacy.parent)
    assert "trainable_token_indices" not in legacy.read_text()
    compile(legacy.read_text(), "train.py", "exec")


def test_same_script_targeting_0_1_has_no_migration_findings(legacy: Path) -> None:
    proc = run("--target-version", "0.1", "--output-format", "json", legacy.name, cwd=legacy.parent)
    codes = {item["code"] for item in findings(proc)}
    assert not codes & {"PTR003", "PTR004", "PTR005", "PTR308"}, codes


def test_target_version_from_pyproject(legacy: Path) -> None:
    (legacy.parent / "pyproject.toml").write_text('[tool.trio-lint]\ntarget-version = "0.1"\n')
    proc = run("--output-format", "json", legacy.name, cwd=legacy.parent)
    assert not {item["code"] for item in findings(proc)} & {"PTR003", "PTR004"}
    (legacy.parent / "pyproject.toml").write_text('[tool.trio-lint]\ntarget-version = "0.3"\n')
    proc = run(legacy.name, cwd=legacy.parent)
    assert proc.returncode == 2 and "target-version" in proc.stderr


def test_version_gates_select_rules() -> None:
    on_01 = {rule.code for rule in select_rules(LintConfig(target_version="0.1"))}
    on_02 = {rule.code for rule in select_rules(LintConfig(target_version="0.2"))}
    assert {"PTR104", "PTR108"} <= on_02 - on_01
    # The API conformance rules run on every release: the data says what each one has.
    conformance = {"PTR003", "PTR004", "PTR005", "PTR006", "PTR007", "PTR212", "PTR213"}
    assert conformance <= on_01 & on_02


def test_force_sdk_lints_files_that_never_name_the_sdk(tmp_path: Path) -> None:
    # A helper module that gets its client passed in: no `pytrio` in the file at all.
    (tmp_path / "helpers.py").write_text(
        "def step(train, batch, adam):\n"
        "    train.forward_backward(batch, 'cross_entropy')\n"
        "    return train.optim_step(adam).result()\n"
    )
    skipped = run("--output-format", "json", "helpers.py", cwd=tmp_path)
    assert findings(skipped) == []
    forced = run("--force-sdk", "--output-format", "json", "helpers.py", cwd=tmp_path)
    assert [item["code"] for item in findings(forced)] == ["PTR102"]


TINKER_SCRIPT = """\
import tinker
from tinker import types

service = tinker.ServiceClient()
training = service.create_lora_training_client(base_model="meta-llama/Llama-3.2-1B")
params = types.SamplingParams(max_new_tokens=32)
adam = types.AdamParams(lr=1e-4)
training.optim_step(adam)
result = training.forward_backward(batch, "cross_entropy").result()
print(result.metrics["loss:sum"])  # Tinker's own metric key
training.save_state("runs/step 1")
from tinker.lib.public_interfaces import TrainingClient
"""


def test_tinker_code_gets_the_shared_rules_only() -> None:
    config = {
        "sdk-modules": ["pytrio", "tinker"],
        "target-version": "0.2",
        "trainable-models": ["Qwen/Qwen3-8B"],
    }
    codes = sorted(d.code for d in lint_source(TINKER_SCRIPT, "tinker_train.py", config))
    # Tinker shares the API shape: HF keyword names and dropped futures apply.
    assert {"PTR201", "PTR202", "PTR102"} <= set(codes), codes
    # PyTRIO-only rules stay off for Tinker code: its model catalogue (PTR402), metric keys
    # (PTR308, "loss:sum" is Tinker's real key), checkpoint names (PTR208) and module layout
    # (PTR001, PTR002) are not PyTRIO's.
    assert not {"PTR402", "PTR308", "PTR208", "PTR001", "PTR002"} & set(codes), codes
    assert codes.count("PTR102") == 2  # both dropped futures (optim_step, save_state)
    without_tinker = {d.code for d in lint_source(TINKER_SCRIPT, "t.py", {"target-version": "0.2"})}
    assert not without_tinker & {"PTR201", "PTR202", "PTR102"}


def test_pytrio_only_rules_are_marked() -> None:
    marked = {rule.code for rule in all_rules() if rule.pytrio_only}
    assert {"PTR001", "PTR002", "PTR308", "PTR402"} <= marked
    # The API shape Tinker shares: futures, HF keyword habits, token data.
    shared = {"PTR101", "PTR102", "PTR103", "PTR201", "PTR202", "PTR204", "PTR301", "PTR305"}
    assert not shared & marked


def test_configure_timeout_is_reported_for_0_2_9_and_accepted_for_0_2_8(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text("import pytrio as trio\n\ntrio.configure(timeout=600)\n")
    found = findings(run("--output-format", "json", script.name, cwd=tmp_path))
    assert [(item["code"], item["location"]["row"]) for item in found] == [("PTR004", 3)]
    assert "request_timeout_seconds" in found[0]["message"] and "0.2.9" in found[0]["message"]
    assert (
        findings(
            run("--target-version", "0.2.8", "--output-format", "json", script.name, cwd=tmp_path)
        )
        == []
    )
    fixed = run("--fix", script.name, cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert (
        script.read_text()
        == "import pytrio as trio\n\ntrio.configure(request_timeout_seconds=600)\n"
    )


def _configure_renames() -> list[tuple[str, str]]:
    from pytrio_facts.api_model import renames

    return [(r.old, r.new) for r in renames() if r.symbol == "pytrio.configure"]


@pytest.mark.parametrize(("old", "new"), _configure_renames())
def test_every_configure_rename_is_fixed_for_0_2_9_and_kept_for_0_2_8(old: str, new: str) -> None:
    from trio_lint import fix_source

    before = f"import pytrio as trio\ntrio.configure({old}=1)\n"
    on_029 = list(lint_source(before, "a.py", {"target-version": "0.2.9"}))
    assert [d.code for d in on_029] == ["PTR004"] and f"`{new}`" in on_029[0].message
    result = fix_source(before, "a.py", {"target-version": "0.2.9"})
    assert result.source == f"import pytrio as trio\ntrio.configure({new}=1)\n"
    assert lint_source(before, "a.py", {"target-version": "0.2.8"}) == []
    after = [d.code for d in lint_source(result.source, "a.py", {"target-version": "0.2.8"})]
    # The 0.2.9 name on a 0.2.8 pin: added in 0.2.9 (PTR007), or, for the three heartbeat and
    # event names 0.2.0 already used, removed in 0.2.1 (PTR004).
    assert after in (["PTR007"], ["PTR004"])


def test_former_rule_names_still_select_and_ignore(tmp_path: Path) -> None:
    """PTR003 and PTR007 were renamed when the API data replaced their lists; a configuration
    that names them the old way keeps working."""
    script = tmp_path / "a.py"
    script.write_text(
        "import pytrio as trio\nrest = trio.ServiceClient().create_rest_client()\n"
        "rest.list_weights()\n"
    )
    (tmp_path / "pyproject.toml").write_text(
        '[tool.trio-lint]\nignore = ["removed-rest-method", "newer-api-on-0-1"]\n'
    )
    assert findings(run("--output-format", "json", script.name, cwd=tmp_path)) == []
    (tmp_path / "pyproject.toml").write_text('[tool.trio-lint]\nselect = ["removed-rest-method"]\n')
    found = findings(run("--output-format", "json", script.name, cwd=tmp_path))
    assert [item["code"] for item in found] == ["PTR003"]
