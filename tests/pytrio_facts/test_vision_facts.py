"""The image facts (pytrio_facts.vision), the exception classes (pytrio_facts.exceptions) and the
statements the skill makes about them, read back from the installed SDK, from transformers' image
processor source (the public arithmetic the docs state) and from the skill's own pages and
example. What only a running service shows is checked under trio-local: tests/trio_local/
test_local_images.py (positions, refusals, --check) and tests/skill/test_examples.py (example 11,
the retry helper, the newest ckpt-*, steps after a resume, custom-loss metrics).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import math
import pkgutil
import random
import re
import runpy
from pathlib import Path

import pytest
import pytrio as trio
import pytrio.errors
from pytrio.client import sampling as sampling_module
from pytrio.client.training_batch import plan_training_batch
from pytrio.model.limits import TrainingLimits
from pytrio.types import SupportedModel

from pytrio_facts import errors as error_facts
from pytrio_facts import vision
from pytrio_facts.exceptions import EXCEPTION_CLASSES

ROOT = Path(__file__).resolve().parents[2]
SDK_DIR = Path(trio.__file__).parent
PAGE = (ROOT / "references" / "vision.md").read_text(encoding="utf-8")
FLAT_PAGE = " ".join(PAGE.split())
EXAMPLE = ROOT / "examples" / "11_vision_sft.py"


def transformers_file(relative: str) -> str:
    """A transformers source file as text (not imported: its image modules pull torchvision)."""
    spec = importlib.util.find_spec("transformers")
    assert spec is not None and spec.origin is not None
    return (Path(spec.origin).parent / relative).read_text(encoding="utf-8")


def transformers_smart_resize():
    source = transformers_file("models/qwen2_vl/image_processing_qwen2_vl.py")
    tree = ast.parse(source)
    function = next(
        n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "smart_resize"
    )
    namespace: dict = {"math": math}
    exec(ast.unparse(function), namespace)
    return namespace["smart_resize"]


def sizes(count: int = 400) -> list[tuple[int, int]]:
    rng = random.Random(37)
    fixed = [(16, 16), (64, 48), (640, 480), (1920, 1080), (8000, 8000), (1, 199), (3000, 20)]
    drawn = []
    while len(drawn) < count:
        width, height = rng.randint(1, 9000), rng.randint(1, 9000)
        if max(width, height) / min(width, height) <= vision.MAX_ASPECT_RATIO:
            drawn.append((width, height))
    return fixed + drawn


# -- the processor arithmetic -------------------------------------------------------------------


def test_resize_is_transformers_smart_resize_for_every_family() -> None:
    smart_resize = transformers_smart_resize()
    processors = {f.processor for f in vision.MODEL_FAMILIES if f.processor is not None}
    assert len(processors) == 2
    for processor in processors:
        for width, height in sizes():
            expected = smart_resize(
                height,
                width,
                factor=processor.factor,
                min_pixels=processor.min_pixels,
                max_pixels=processor.max_pixels,
            )
            assert processor.resized(height, width) == expected, (width, height)
    with pytest.raises(ValueError, match="aspect ratio"):
        smart_resize(10, 2001)
    with pytest.raises(ValueError, match="aspect ratio"):
        vision.image_tokens("Qwen/Qwen3.5-4B", 2001, 10)


def test_tokens_are_patches_over_merge_squared_as_the_processors_count_them() -> None:
    processing = transformers_file("models/qwen2_vl/image_processing_qwen2_vl.py")
    assert "grid_h, grid_w = resized_height // patch_size, resized_width // patch_size" in (
        processing
    )
    qwen3_vl = transformers_file("models/qwen3_vl/processing_qwen3_vl.py")
    assert "num_image_tokens = [(num_patches // merge_size**2)" in qwen3_vl
    assert 'self.image_token = "<|image_pad|>"' in qwen3_vl
    assert '"<|vision_start|>"' in qwen3_vl and '"<|vision_end|>"' in qwen3_vl
    # Qwen3.5/3.6 (model type qwen3_5) use the Qwen3-VL processor and Qwen2-VL's image processor
    auto_processing = transformers_file("models/auto/processing_auto.py")
    assert '("qwen3_5", "Qwen3VLProcessor")' in auto_processing
    auto_image = transformers_file("models/auto/image_processing_auto.py")
    for model_type in ("qwen3_5", "qwen3_5_moe", "qwen3_vl"):
        assert f'("{model_type}", {{"torchvision": "Qwen2VLImageProcessor"' in auto_image
    qwen3_5 = transformers_file("models/qwen3_5/configuration_qwen3_5.py")
    assert "patch_size: int | list[int] | tuple[int, int] = 16" in qwen3_5
    assert "spatial_merge_size: int = 2" in qwen3_5
    assert vision.image_tokens("Qwen/Qwen3.5-4B", 16, 16) == 64  # scaled up to min_pixels


def test_families_and_sources() -> None:
    names = {f.name for f in vision.MODEL_FAMILIES}
    assert {"Qwen3-VL", "Qwen3.5", "Qwen3.6", "Qwen3"} <= names
    for family in vision.MODEL_FAMILIES:
        assert family.source.startswith("https://huggingface.co/Qwen/"), family
        wanted = "preprocessor_config.json" if family.processor else "config.json"
        assert family.source.endswith("/" + wanted), family
    cases = {
        "Qwen/Qwen3-VL-8B-Instruct": "Qwen3-VL",
        "Qwen/Qwen3.5-4B": "Qwen3.5",
        "Qwen/Qwen3.5-35B-A3B": "Qwen3.5",
        "Qwen/Qwen3.6-27B": "Qwen3.6",
        "Qwen/Qwen2.5-VL-7B-Instruct": "Qwen2.5-VL",
        "Qwen/Qwen3-4B-Instruct-2507": "Qwen3",
        "Qwen/Qwen3-30B-A3B": "Qwen3",
    }
    for model_id, family in cases.items():
        assert vision.family_of(model_id).name == family, model_id
    assert vision.family_of("meta-llama/Llama-3.1-8B") is None
    assert vision.family_of("Qwen/Qwen3-Omni-30B-A3B-Instruct") is None  # not text-only
    with pytest.raises(ValueError, match="text-only"):
        vision.image_tokens("Qwen/Qwen3-8B", 64, 64)


# -- the SDK facts the page states ---------------------------------------------------------------


def _image(expected: int | None = None) -> trio.ImageChunk:
    return trio.ImageChunk(data=b"\x89PNG\r\n\x1a\n", format="png", expected_tokens=expected)


def _plan(model_input: trio.ModelInput, targets: int):
    datum = trio.Datum(model_input=model_input, loss_fn_inputs={"target_tokens": [1] * targets})
    return plan_training_batch(
        [datum],
        loss_fn="cross_entropy",
        auto_shift=False,
        limits=TrainingLimits(None, None, None),
        tokenizer_vocab_size=151_669,
    )


def test_sdk_needs_infers_and_refuses_expected_tokens_as_the_page_says() -> None:
    text = trio.types.EncodedTextChunk(tokens=[1, 2, 3])
    with pytest.raises(ValueError) as missing:
        _ = trio.ModelInput(chunks=[text, _image()]).length
    message = str(missing.value)
    assert message == "image chunks require expected_tokens to calculate model input length"
    assert f"`ValueError: {message}`" in FLAT_PAGE
    assert trio.ModelInput(chunks=[text, _image(70)]).length == 73
    _plan(trio.ModelInput(chunks=[text, _image()]), 73)  # one image: inferred (73 - 3 = 70)
    with pytest.raises(ValueError) as two:
        _plan(trio.ModelInput(chunks=[_image(), text, _image()]), 73)
    assert f"`ValueError: {two.value}`" in FLAT_PAGE
    with pytest.raises(ValueError) as shape:
        _plan(trio.ModelInput(chunks=[text, _image(4)]), 67)
    assert "target_tokens must have shape [7], got [67]" in str(shape.value)
    assert "`ValueError: target_tokens must have shape [N], got [M]`" in FLAT_PAGE
    with pytest.raises(ValueError, match="image chunks and cannot be converted"):
        trio.ModelInput(chunks=[text, _image(4)]).to_ints()
    assert "`model_input.to_ints()` raises" in FLAT_PAGE


def test_image_chunk_fields_formats_and_the_estimate_docstring() -> None:
    fields = trio.ImageChunk.model_fields
    assert set(fields) == {"data", "format", "expected_tokens", "type"}
    assert fields["format"].annotation.__args__ == vision.IMAGE_FORMATS
    assert fields["expected_tokens"].default is None
    with pytest.raises(Exception, match="greater than 0"):
        _image(0)
    doc = trio.ImageChunk.__doc__ or ""
    assert "expected_tokens" in doc and "仅供本地长度估算使用" in doc  # local estimate only
    assert "服务端始终根据实际图像尺寸重新" in doc  # the service recomputes from the image
    assert "the service always recomputes the vision tokens from the actual image size" in (
        FLAT_PAGE
    )
    assert set(SupportedModel.model_fields) == {
        "model_name",
        "max_context_length",
        "training",
        "sampling",
    }
    assert "has no modality field" in FLAT_PAGE


def test_logprobs_with_images_are_refused_before_sending() -> None:
    submit = inspect.getsource(sampling_module.SamplingClient._submit_sample)
    scoring = inspect.getsource(sampling_module.SamplingClient._compute_logprobs)
    for source in (submit, scoring):
        assert "prompt.has_images" in source
        assert 'code="validation.image_logprobs_unsupported"' in source
    assert error_facts.error("validation.image_logprobs_unsupported").error_class == (
        "ValidationError"
    )
    assert "`validation.image_logprobs_unsupported`" in FLAT_PAGE


# -- the page and the example agree with the facts -----------------------------------------------


def test_page_table_rows_and_worked_values_come_from_the_facts() -> None:
    for family in vision.MODEL_FAMILIES:
        row = next(
            (line for line in PAGE.splitlines() if line.startswith(f"| {family.name} |")), None
        )
        assert row is not None, family.name
        assert family.source in row
        processor = family.processor
        if processor is None:
            assert "| no |" in row
            continue
        least = processor.tokens(1, 1)
        cells = (
            f"| yes | {processor.patch_size} | {processor.merge_size} | {processor.min_pixels} | "
            f"{processor.max_pixels} | {least} to 16384 |"
        )
        assert cells in row, (family.name, cells)
        most = processor.max_pixels // processor.factor**2  # every size stays within it
        assert most == 16384 == processor.tokens(8000, 8000)
        assert all(processor.tokens(h, w) <= most for w, h in sizes(100))
    for width, height in [(16, 16), (64, 48), (640, 480), (1920, 1080), (8000, 8000)]:
        qwen3 = vision.image_tokens("Qwen/Qwen3.5-4B", width, height)
        qwen2 = vision.image_tokens("Qwen/Qwen2.5-VL-7B-Instruct", width, height)
        assert f"| {width} x {height} | {qwen3} | {qwen2} |" in PAGE
    for token in (vision.VISION_START, vision.IMAGE_PAD, vision.VISION_END):
        assert token in PAGE


def _page_blocks() -> dict[str, str]:
    blocks = re.findall(r"```python\n(.*?)```", PAGE, re.S)
    named = {}
    for block in blocks:
        for name in re.findall(r"^def (\w+)", block, re.M):
            named[name] = block
    return named


def test_example_and_page_code_agree_with_the_facts() -> None:
    example = runpy.run_path(str(EXAMPLE))  # defines, does not run main
    blocks = _page_blocks()
    page: dict = {}
    for name in ("image_processor", "expected_tokens"):
        exec(_definitions(blocks[name]), page)
    for table in (example["VISION_FAMILIES"], page["VISION_FAMILIES"]):
        for prefix, settings in table.items():
            family = vision.family_of(f"Qwen/{prefix}x")
            processor = family.processor
            assert family.pattern.replace("\\", "") == prefix
            assert settings == (
                processor.patch_size,
                processor.merge_size,
                processor.min_pixels,
                processor.max_pixels,
            )
        vision_families = {f.name for f in vision.MODEL_FAMILIES if f.processor}
        assert len(table) == len(vision_families)
    for model_id in ("Qwen/Qwen3.5-4B", "Qwen/Qwen3-VL-8B-Instruct", "Qwen/Qwen2-VL-2B-Instruct"):
        settings = page["image_processor"](model_id)
        for width, height in sizes(60):
            truth = vision.image_tokens(model_id, width, height)
            assert example["expected_tokens"](model_id, width, height) == truth
            assert page["expected_tokens"](width, height, *settings) == truth
    for model_id in ("Qwen/Qwen3-4B-Instruct-2507", "Qwen/Qwen2.5-7B-Instruct"):
        assert example["image_processor"](model_id) is None
        assert page["image_processor"](model_id) is None
    # the page shows the example's prompt and datum builders, not variants of them
    source = EXAMPLE.read_text(encoding="utf-8")
    for name in ("prompt_around_image", "image_prompt", "image_datum"):
        assert _function_body(blocks[name], name) == _function_body(source, name)


def _definitions(block: str) -> str:
    """A page block's imports, constants and functions, without the lines that use them."""
    kept = [
        node
        for node in ast.parse(block).body
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef))
        or (isinstance(node, ast.Assign) and ast.unparse(node.targets[0]).isupper())
    ]
    return ast.unparse(ast.Module(body=kept, type_ignores=[]))


def _function_body(source: str, name: str) -> str:
    tree = ast.parse(source)
    function = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name)
    function.body = [b for b in function.body if not isinstance(b, ast.Expr)]  # no docstring
    return ast.unparse(function)


def test_skill_routes_to_the_vision_page() -> None:
    skill = (ROOT / "SKILL.md").read_text(encoding="utf-8")
    assert "[references/vision.md](references/vision.md)" in skill
    assert "[examples/11_vision_sft.py](examples/11_vision_sft.py)" in skill


# -- exception classes ---------------------------------------------------------------------------


def _sdk_exception_classes() -> dict[str, type]:
    found = {}
    for module_info in pkgutil.iter_modules(pytrio.errors.__path__):
        module = importlib.import_module(f"pytrio.errors.{module_info.name}")
        for name, value in vars(module).items():
            if (
                isinstance(value, type)
                and issubclass(value, trio.PyTrioError)
                and value.__module__ == module.__name__
            ):
                found[name] = value
    return found


def test_exception_classes_import_paths_and_parents() -> None:
    sdk = _sdk_exception_classes()
    listed = {fact.name: fact for fact in EXCEPTION_CLASSES}
    skipped = {"PyTrioProtocolError", "PayloadSchemaNotFinalizedError"}  # SDK internals
    assert set(sdk) - skipped == set(listed)
    for fact in EXCEPTION_CLASSES:
        module = importlib.import_module(fact.module)
        cls = getattr(module, fact.name)
        assert cls.__bases__[0].__name__ == fact.parent, fact.name
        assert cls is trio.PyTrioError or cls is sdk[fact.name]
        assert not issubclass(cls, ValueError)


def test_never_retryable_classes_are_never_raised_retryable() -> None:
    never = {fact.name for fact in EXCEPTION_CLASSES if fact.retryable == "never"}
    for path in SDK_DIR.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if not any(f"{name}(" in text for name in never):
            continue  # constructs none of them: nothing to parse
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
                continue
            if node.func.id in never:
                flags = [k for k in node.keywords if k.arg == "retryable"]
                assert all(
                    isinstance(k.value, ast.Constant) and k.value.value is False for k in flags
                ), f"{path}: {ast.unparse(node)}"
    for fact in error_facts.ERROR_CODES:
        if fact.error_class in never:
            assert not fact.retryable, fact.code


def test_debugging_page_lists_the_classes_and_the_retryable_codes() -> None:
    page = (ROOT / "references" / "debugging.md").read_text(encoding="utf-8")
    flat = " ".join(page.split())
    for fact in EXCEPTION_CLASSES:
        if fact.name == "PyTrioError":
            continue
        row = f"| `{fact.name}` | `{fact.import_line}` | `{fact.parent}` | {fact.raised_when} |"
        if fact.name in {"ControlError", "ActorError", "EventError", "ProtocolError"}:
            assert f"`{fact.name}` (`{fact.module}`)" in flat
        else:
            assert row in page, row
            assert row + f" {fact.retryable} |" in page
    retryable = [fact.code for fact in error_facts.ERROR_CODES if fact.retryable]
    assert ", ".join(f"`{code}`" for code in retryable) in flat
    statuses = inspect.getsource(importlib.import_module("pytrio.errors.diagnostics"))
    assert "_RETRYABLE_STATUS_CODES = {408, 429, 500, 502, 503, 504}" in statuses
    assert "(408, 429, 500, 502, 503, 504)" in flat


# -- custom-loss metrics, saved steps -----------------------------------------------------------


def test_custom_loss_metrics_are_the_surrogates_then_yours() -> None:
    source = inspect.getsource(trio.TrainingClient._merge_custom_metrics)
    assert "metrics={**response.metrics, **custom_metrics}" in source
    page = " ".join((ROOT / "references" / "training-client.md").read_text().split())
    assert (
        "`{**surrogate_metrics, **metrics}`" in page
        and "`TrainingClient._merge_custom_metrics`" in page
    )
    assert "which replace those three on a clash" in page


def test_the_sdk_keeps_no_step_counter() -> None:
    from pytrio.types import OptimStepResponse
    from pytrio.types.rest import Checkpoint

    assert set(OptimStepResponse.model_fields) == {"metrics"}
    assert not {"step", "name"} & set(Checkpoint.model_fields)
    public = [name for name in dir(trio.TrainingClient) if not name.startswith("_")]
    assert [name for name in public if "step" in name] == ["optim_step", "optim_step_async"]
    page = " ".join((ROOT / "best-practices" / "checkpoints.md").read_text().split())
    assert "**What a saved state holds, and where a resumed count starts.**" in page
    assert (
        'trio-local reports the optimizer\'s count as `optim_step(...).result().metrics["step"]`'
        in (page)
    )


def test_qwen3_5_architectures_and_trio_locals_request_limit() -> None:
    for relative, name in (
        ("models/qwen3_5/modeling_qwen3_5.py", "Qwen3_5ForConditionalGeneration"),
        ("models/qwen3_5_moe/modeling_qwen3_5_moe.py", "Qwen3_5MoeForConditionalGeneration"),
    ):
        assert f"class {name}(" in transformers_file(relative)
        assert f"`{name}`" in FLAT_PAGE
    from trio_local.config import ServeConfig

    assert ServeConfig.actor_body_limit == 64 * 1024 * 1024  # a dataclass default
    assert "its request-body limit (64 MiB per actor request)" in FLAT_PAGE
