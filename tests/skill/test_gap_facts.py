"""Facts the skill states about runs, checkpoints, futures and configuration, read back from the
installed SDK. Behaviour only a running service shows is checked under trio-local by the example
tests (examples 06, 08 and 09); what only the real service can settle is marked so in the docs.
"""

import ast
import concurrent.futures
import datetime
import inspect
import re
import warnings
from pathlib import Path

import pytrio as trio
from pytrio.client.adapters.rest import training_run as training_run_adapter
from pytrio.types import APIFuture, SaveWeightsForSamplerResponse, SaveWeightsResponse
from pytrio.types.rest import Checkpoint, TrainingRun

ROOT = Path(__file__).resolve().parents[2]
SKILL = (ROOT / "SKILL.md").read_text(encoding="utf-8")
REST = (ROOT / "references" / "rest-client.md").read_text(encoding="utf-8")


def test_training_run_has_no_creation_time_and_no_filled_checkpoints() -> None:
    fields = set(TrainingRun.model_fields)
    assert fields == {
        "training_run_id", "base_model", "model_owner", "is_lora", "corrupted", "lora_rank",
        "last_request_time", "last_checkpoint", "last_sampler_checkpoint", "user_metadata",
    }  # fmt: skip
    assert not {f for f in fields if "creat" in f or f == "time"}
    for field in sorted(fields):
        assert f"`{field}`" in REST, field
    # The adapter that builds every TrainingRun leaves both checkpoints empty.
    tree = ast.parse(inspect.getsource(training_run_adapter.training_run_from_control))
    keywords = {k.arg: k.value for k in ast.walk(tree) if isinstance(k, ast.keyword)}
    for name in ("last_checkpoint", "last_sampler_checkpoint"):
        assert isinstance(keywords[name], ast.Constant) and keywords[name].value is None


def test_checkpoint_fields_time_type_and_missing_names() -> None:
    assert list(Checkpoint.model_fields) == [
        "checkpoint_id", "checkpoint_type", "time", "path", "size_bytes", "public", "expires_at",
    ]  # fmt: skip
    assert Checkpoint.model_fields["time"].annotation is datetime.datetime
    for wrong in ("name", "trio_path"):
        assert wrong not in Checkpoint.model_fields
    for model in (SaveWeightsResponse, SaveWeightsForSamplerResponse):
        assert set(model.model_fields) == {"path", "model", "size", "type"}  # no checkpoint_id


def test_listing_takes_no_sort_order() -> None:
    for name in ("list_training_runs", "list_training_runs_async"):
        params = list(inspect.signature(getattr(trio.RestClient, name)).parameters)
        assert params == ["self", "limit", "offset", "access_scope"]
    params = list(inspect.signature(trio.RestClient.list_user_checkpoints).parameters)
    assert params == ["self", "limit", "offset"]


def test_checkpoint_names_are_per_run_and_only_save_state_overwrites() -> None:
    save_state = inspect.signature(trio.TrainingClient.save_state).parameters
    assert save_state["overwrite"].default is False
    assert (
        "overwrite"
        not in inspect.signature(trio.TrainingClient.save_weights_for_sampler).parameters
    )
    assert "within the current training run" in trio.TrainingClient.save_state.__doc__


def test_download_writes_one_file_and_creates_parents() -> None:
    from pytrio.transport.download import Downloader

    source = inspect.getsource(Downloader.download)
    assert "destination_path.parent.mkdir(parents=True, exist_ok=True)" in source
    # resume=True continues whatever file is already at the destination
    assert "if resume and destination_path.exists()" in source
    assert '{"Range": f"bytes={existing_size}-"}' in source
    assert "Local destination file" in trio.RestClient.download_checkpoint.__doc__


def test_wrong_guesses_do_not_exist_and_skill_md_answers_them() -> None:
    assert not hasattr(APIFuture, "result_async")
    assert hasattr(APIFuture, "__await__")  # `await future` is the async way
    assert not hasattr(concurrent.futures.Future, "__await__")  # RestClient's sync results
    assert hasattr(trio.RestClient, "list_checkpoints_async")
    assert not hasattr(trio.RestClient, "get_archive_url")
    assert hasattr(trio.RestClient, "get_checkpoint_archive_url")
    for guess in ("result_async()", "get_archive_url", "trio_path", "checkpoint_id", "newest"):
        assert guess in SKILL, guess


def test_sync_only_calls_named_in_async_md() -> None:
    text = (ROOT / "best-practices" / "async.md").read_text(encoding="utf-8")
    sync_only = set()
    for cls in (trio.ServiceClient, trio.TrainingClient, trio.SamplingClient):
        public = {n for n in vars(cls) if not n.startswith("_") and callable(vars(cls)[n])}
        sync_only |= {n for n in public if not n.endswith("_async") and f"{n}_async" not in public}
    assert sync_only == {"create_rest_client", "get_supported_models", "get_tokenizer"}
    for name in sync_only:
        assert f"{name}()" in text, name


def test_unknown_configure_option_only_warns() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trio.configure(a_name_from_an_older_release=1)
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert messages == ["Unknown configuration option 'a_name_from_an_older_release' was ignored."]
    text = (ROOT / "references" / "service-client.md").read_text(encoding="utf-8")
    assert messages[0].replace("a_name_from_an_older_release", "...") in text


def test_empty_training_data_is_refused_by_the_sdk_and_adam_keeps_momentum() -> None:
    source = inspect.getsource(trio.TrainingClient)
    assert re.search(r'code="validation\.empty_training_data"', source)
    assert trio.AdamParams().beta1 == 0.9
