"""The facts assistants used to guess, read back from the installed SDK (and trio-local's code),
and found where an assistant looks first: SKILL.md and the page of the task. What only a running
service shows is checked under trio-local in test_examples.py
(`test_guessed_facts_hold_under_trio_local`).
"""

import ast
import inspect
import subprocess
from pathlib import Path

import pydantic
import pytest
import pytrio as trio
from pytrio.client import training as training_module
from pytrio.client.adapters.rest import checkpoint as checkpoint_adapter
from pytrio.client.adapters.rest import training_run as training_run_adapter
from pytrio.client.builders import training as training_builder
from pytrio.client.training_batch import plan_training_batch
from pytrio.model.limits import TrainingLimits
from pytrio.protocol.actor.events.trainer.forward import LossSpec
from pytrio.protocol.control.checkpoint.list import CheckpointResponse
from pytrio.types.rest import Checkpoint

import pytrio_facts as facts
from pytrio_facts import api_model, generate_api

ROOT = Path(__file__).resolve().parents[2]


def read(relative: str) -> str:
    return " ".join((ROOT / relative).read_text(encoding="utf-8").split())


SKILL = read("SKILL.md")


# 1. loss_fn_config keys ------------------------------------------------------------------------


def test_sdk_sends_loss_fn_config_unchecked() -> None:
    assert LossSpec.model_fields["config"].annotation == dict[str, object]
    source = inspect.getsource(training_builder.build_trainer_forward_payload)
    assert "LossSpec(type=chunk.loss_fn, config=loss_fn_config or {})" in source


def test_config_keys_and_defaults_are_the_ones_trio_local_enforces() -> None:
    pytest.importorskip("torch")
    import importlib

    ppo, cispo, dro = (
        importlib.import_module(f"trio_local.engine.losses.{name}")
        for name in ("ppo", "cispo", "dro")
    )

    local = {"ppo": ppo.DEFAULTS, "cispo": cispo.DEFAULTS, "dro": dro.DEFAULTS}
    for loss in facts.LOSSES:
        if loss.name in local:
            assert set(loss.config_keys) == set(local[loss.name]), loss.name
    assert ppo.DEFAULTS == {"clip_low_threshold": 0.8, "clip_high_threshold": 1.2}
    assert cispo.DEFAULTS == {"clip_low_threshold": 0.0, "clip_high_threshold": 4.0}
    rl = read("best-practices/rl.md")
    assert "| `ppo` | `clip_low_threshold`, `clip_high_threshold`" in rl
    assert "| 0.8, 1.2 | PyTRIO's vendor skill, github.com/SwanHubX/pytrio-skill" in rl
    assert "| 0.0, 4.0 (one-sided) |" in rl
    assert f"(trio-local: {dro.DEFAULTS['beta']})" in rl
    for text in (SKILL, rl):
        assert "invalid_loss_config" in text and "EventFailedError" in text
    assert "default 0.8 and 1.2" in SKILL and "github.com/SwanHubX/pytrio-skill" in SKILL


# 2. ignore_eos ---------------------------------------------------------------------------------


def test_ignore_eos_is_gone_and_refused() -> None:
    with pytest.raises(pydantic.ValidationError) as caught:
        trio.SamplingParams(max_tokens=4, ignore_eos=True)
    assert caught.value.errors()[0]["type"] == "extra_forbidden"
    present = api_model.api_data().present("pytrio.types.SamplingParams", "ignore_eos")
    versions = api_model.releases()
    assert present[versions.index("0.1.13")] and not present[versions.index("0.2.9")]
    assert set(trio.SamplingParams.model_fields) == {f.name for f in facts.SAMPLING_PARAMS}
    for text in (SKILL, read("references/sampling-client.md")):
        assert "There is no `ignore_eos` on 0.2" in text or "has no replacement on 0.2" in text
        assert "`max_tokens`" in text and "`stop`" in text


# 3. auto_shift and -100 ------------------------------------------------------------------------


def _active_tokens(targets: list[int], *, auto_shift: bool = False) -> int:
    datum = trio.Datum(
        model_input=trio.ModelInput.from_ints([9707] * len(targets)),
        loss_fn_inputs={"target_tokens": targets, "weights": [1.0] * len(targets)},
    )
    plan = plan_training_batch(
        [datum],
        loss_fn="cross_entropy",
        auto_shift=auto_shift,
        limits=TrainingLimits(None, None, None),
        tokenizer_vocab_size=151_669,
    )
    return plan.totals.total_active_tokens


def test_minus_100_targets_are_skipped_and_other_bad_ids_refused() -> None:
    assert _active_tokens([1879, 11, 1879]) == 3
    assert _active_tokens([-100, -100, 1879]) == 1
    assert _active_tokens([1879, 11, 1879], auto_shift=True) == 2  # the first target is dropped
    with pytest.raises(trio.PyTrioError) as caught:
        _active_tokens([1879, -5, 1879])
    assert caught.value.code == "validation.token_id_out_of_range"


def test_auto_shift_kept_its_meaning_and_default() -> None:
    data = api_model.api_data()
    for version in data.versions:  # every release, 0.1.12 to 0.2.9, has the flag
        method = data.symbol("pytrio.TrainingClient", version).methods["forward_backward"]
        assert "auto_shift" in method.keywords, version
    assert (
        inspect.signature(trio.TrainingClient.forward_backward).parameters["auto_shift"].default
        is False
    )
    assert "shifts labels by one token" in trio.TrainingClient.forward_backward.__doc__
    migration = read("references/migration-0.1-to-0.2.md")
    assert "`auto_shift` did not change" in migration and "From 0.2.4 the SDK" in migration
    for page in (SKILL, read("best-practices/sft.md"), migration):
        assert "0.2.0–0.2.3" in page and "-100" in page


def _released_modules(version: str) -> dict[str, ast.Module]:
    """The parsed sources of a released pytrio wheel (the `make facts` cache, else pip)."""
    try:
        wheel = generate_api.wheel_for(version, generate_api._cache_dir())
    except (subprocess.CalledProcessError, SystemExit) as err:
        pytest.skip(f"pytrio=={version} wheel neither cached nor downloadable: {err}")
    return generate_api.read_modules(wheel)


def _compares_with_minus_100(tree: ast.AST) -> bool:
    return any(
        isinstance(node, ast.Compare)
        and any(
            isinstance(side, ast.UnaryOp)
            and isinstance(side.op, ast.USub)
            and isinstance(side.operand, ast.Constant)
            and side.operand.value == 100
            for side in (node.left, *node.comparators)
        )
        for node in ast.walk(tree)
    )


def _payload_fields(modules: dict[str, ast.Module]) -> set[str]:
    forward = modules.get("pytrio.protocol.actor.events.trainer.forward")  # not on 0.1
    if forward is None:
        return set()
    return {
        node.target.id
        for node in ast.walk(forward)
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
    }


@pytest.mark.parametrize(
    ("version", "skips_minus_100"), [("0.1.13", False), ("0.2.3", False), ("0.2.4", True)]
)
def test_minus_100_is_skipped_from_0_2_4_on(version: str, skips_minus_100: bool) -> None:
    # the boundary the docs name: 0.2.4 is the first release that counts the active tokens
    # itself (sent as total_active_tokens) and leaves -100 targets out of that count
    modules = _released_modules(version)
    assert any(_compares_with_minus_100(tree) for tree in modules.values()) is skips_minus_100
    assert ("total_active_tokens" in _payload_fields(modules)) is skips_minus_100


# 4. temporary sampler weights ------------------------------------------------------------------


def test_temporary_weights_name_ttl_and_kind() -> None:
    assert training_module._TEMP_SAMPLING_NAME_PREFIX == "temp-sampling-"
    assert facts.LIMITS.temporary_sampler_ttl_seconds == training_module._TEMP_SAMPLING_TTL_SECONDS
    assert training_module._TEMP_SAMPLING_TTL_SECONDS == 6 * 60 * 60
    source = inspect.getsource(training_module.TrainingClient._save_weights_and_get_sampling_client)
    assert "uuid.uuid4().hex" in source and "_save_weights_for_sampler" in source
    # the listing keeps the expiry, and nothing filters temporary checkpoints out
    adapter = inspect.getsource(checkpoint_adapter.checkpoint_from_control)
    assert "expires_at=checkpoint.expired_at" in adapter
    for page in (SKILL, read("best-practices/checkpoints.md"), read("references/rest-client.md")):
        assert "temp-sampling-" in page and "expires_at" in page


# 5. last_request_time --------------------------------------------------------------------------


def test_last_request_time_is_the_services_updated_at() -> None:
    tree = ast.parse(inspect.getsource(training_run_adapter.training_run_from_control))
    keywords = {k.arg: ast.unparse(k.value) for k in ast.walk(tree) if isinstance(k, ast.keyword)}
    assert keywords["last_request_time"] == "response.updated_at"
    rest = read("references/rest-client.md")
    assert "fills it from the service's `updated_at`" in rest
    assert "not with the steps and saves in between" in rest
    assert "on trio-local it moves when a run is created" in SKILL and "not with each step" in SKILL
    assert "the real service does not document what moves it" in SKILL


# 6. a sampler before training; the step from the path ------------------------------------------


def test_checkpoint_drops_the_services_step_and_name() -> None:
    assert {"step", "name"} <= set(CheckpointResponse.model_fields)
    assert not {"step", "name"} & set(Checkpoint.model_fields)
    assert "A sampler made **before any training call**" in SKILL
    assert "**On resume, recover the step from the path.**" in SKILL
    checkpoints = read("best-practices/checkpoints.md")
    assert "A sampler made before any training call" in checkpoints
