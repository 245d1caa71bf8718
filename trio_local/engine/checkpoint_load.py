"""A checkpoint checked whole before any of it is used: the one place the engine loads one.

The files are read by `storage.checkpoints` (regular files, bounded sizes and headers, finite
values, the SHA-256 each was saved with); here their content is held against the model and the
adapter it is loaded into: the model id (and so the vocabulary family) the checkpoint was
trained on, its LoRA settings (the rank bounded before anything is sized by it), every adapter
weight present with the shape that rank gives, and the optimizer state matching the adapter
(parameters, slots, flags, step counts). Nothing is allocated for the adapter until all of it
passed, and each refusal is a non-retryable failure naming the checkpoint, the file and why.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from trio_local.catalogue import family_of
from trio_local.engine.model import LoraSpec, ModelHost
from trio_local.engine.optimizer import DEFAULT_GROUP
from trio_local.errors import EngineError
from trio_local.protocol.bounds import INT64_MAX, INT64_MIN, RANK_MAX, RANK_MIN
from trio_local.storage import checkpoints as ckpt_files
from trio_local.storage.reading import FLOAT_DTYPES, HEADER_MAX, CheckpointDamaged
from trio_local.storage.rows import CheckpointKind, CheckpointRow

CONFIG = ckpt_files.ADAPTER_CONFIG
LORA_FIELDS = ("rank", "seed", "train_mlp", "train_attn", "train_unembed")
SLOTS = ("exp_avg", "exp_avg_sq", "step")
SLOT_KEY = re.compile(r"(0|[1-9][0-9]{0,8})\.(\w+)")
WIDEST = max(FLOAT_DTYPES.values())


@dataclass(frozen=True)
class Checkpoint:
    lora: LoraSpec
    adapter: dict[str, Any]  # float32 tensors by adapter_state key
    optimizer: dict[str, Any] | None = None  # "<param index>.<slot>" tensors
    trainer_state: dict[str, Any] | None = None


def invalid(uri: str, file: str, cause: str) -> EngineError:
    return EngineError(
        "checkpoint_invalid",
        f"checkpoint {uri} cannot be loaded: {file} {cause}; save it again from its run, or "
        "delete it",
    )


def _show(value: object) -> str:
    """A value from a file, as a message quotes it: never more than a line."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def saved_lora(config: dict[str, Any]) -> LoraSpec:
    """The LoRA settings the checkpoint records, each checked (the rank bounded) before
    anything is sized by them. Raises CheckpointDamaged."""
    own = config.get("trio_local")
    lora = own.get("lora") if isinstance(own, dict) else None
    if not isinstance(lora, dict) or set(lora) != set(LORA_FIELDS):
        raise CheckpointDamaged(CONFIG, f"has no trio_local.lora with exactly {LORA_FIELDS}")
    rank, seed = lora["rank"], lora["seed"]
    if not _is_int(rank) or not RANK_MIN <= rank <= RANK_MAX:
        raise CheckpointDamaged(
            CONFIG, f"claims LoRA rank {_show(rank)}, outside [{RANK_MIN}, {RANK_MAX}]"
        )
    if seed is not None and not (_is_int(seed) and INT64_MIN <= seed <= INT64_MAX):
        raise CheckpointDamaged(CONFIG, f"claims LoRA seed {_show(seed)}, not a 64-bit integer")
    flags = [lora[name] for name in LORA_FIELDS[2:]]
    if not all(isinstance(flag, bool) for flag in flags) or not any(flags):
        raise CheckpointDamaged(CONFIG, "has train_* flags that are not booleans or train nothing")
    spec = LoraSpec(rank, seed, *flags)
    # peft reads these two (a downloaded archive): they must say what trio-local's section says
    if config.get("r") != rank or sorted(config.get("target_modules") or []) != sorted(
        spec.target_modules()
    ):
        raise CheckpointDamaged(CONFIG, "has r or target_modules that differ from trio_local.lora")
    return spec


def saved_model(config: dict[str, Any], row: CheckpointRow) -> str:
    """The model id the checkpoint's files name, which must be its record's."""
    own = config.get("trio_local")
    model = own.get("model_id") if isinstance(own, dict) else None
    if model is None:  # the field older versions wrote beside peft's
        model = config.get("base_model_name_or_path")
    if not isinstance(model, str) or model.lower() != row.model_id.lower():
        raise CheckpointDamaged(
            CONFIG,
            f"names the model {_show(model)}, but the checkpoint was saved from {row.model_id} "
            "(the file was edited or replaced)",
        )
    return model


def _family(model_id: str) -> str:
    family = family_of(model_id)
    return f"{family.name} vocabulary" if family else "unknown vocabulary"


def _check_model(uri: str, saved: str, model_id: str) -> None:
    if saved.lower() != model_id.lower():
        raise EngineError(
            "checkpoint_model_mismatch",
            f"checkpoint {uri} was trained on {saved} ({_family(saved)}), not on {model_id} "
            f"({_family(model_id)}); load it with a client of {saved}",
        )


def _check_adapter(tensors: dict[str, Any], shapes: dict[str, tuple[int, ...]]) -> dict:
    missing = sorted(set(shapes) - set(tensors))
    extra = sorted(set(tensors) - set(shapes))
    if missing:
        raise CheckpointDamaged(
            ckpt_files.ADAPTER_FILE,
            f"lacks {len(missing)} of the adapter's {len(shapes)} weights (e.g. {missing[0]})",
        )
    if extra:
        raise CheckpointDamaged(
            ckpt_files.ADAPTER_FILE, f"holds weights this adapter does not have: {extra[:3]}"
        )
    for key, shape in shapes.items():
        if tuple(tensors[key].shape) != shape:
            raise CheckpointDamaged(
                ckpt_files.ADAPTER_FILE,
                f"holds {key} of shape {tuple(tensors[key].shape)}; its LoRA settings give {shape}",
            )
    return {key: tensors[key].float() for key in shapes}


def _number(group: dict, key: str, low: float, high: float) -> None:
    value = group.get(key, DEFAULT_GROUP.get(key))
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CheckpointDamaged(ckpt_files.TRAINER_STATE, f"has {key} {_show(value)}, not a number")
    if not (math.isfinite(value) and low <= value <= high):
        raise CheckpointDamaged(
            ckpt_files.TRAINER_STATE, f"has {key} {value}, outside [{low}, {high}]"
        )


def _check_group(group: object) -> None:
    name = ckpt_files.TRAINER_STATE
    if not isinstance(group, dict) or not set(group) <= set(DEFAULT_GROUP):
        raise CheckpointDamaged(name, "has a parameter group with keys other than AdamW's")
    _number(group, "lr", 0.0, math.inf)
    _number(group, "eps", 0.0, math.inf)
    _number(group, "weight_decay", 0.0, math.inf)
    betas = group.get("betas", DEFAULT_GROUP["betas"])
    if not isinstance(betas, list | tuple) or len(betas) != 2:
        raise CheckpointDamaged(name, f"has betas {_show(betas)}, not two numbers")
    for index, beta in enumerate(betas):
        _number({"beta": beta}, "beta", 0.0, 1.0)
        if beta == 1.0:
            raise CheckpointDamaged(name, f"has betas[{index}] 1.0, outside [0, 1)")
    for flag in ("amsgrad", "maximize"):
        if group.get(flag, False) is not False:
            raise CheckpointDamaged(
                name, f"has {flag}={_show(group[flag])}; the trainer's AdamW has neither"
            )


def _check_optimizer(
    state: dict[str, Any], tensors: dict[str, Any], shapes: list[tuple[int, ...]]
) -> None:
    name, steps = ckpt_files.TRAINER_STATE, state.get("optim_steps")
    if not _is_int(steps) or not 0 <= steps <= INT64_MAX:
        raise CheckpointDamaged(name, f"has optim_steps {_show(steps)}, not a step count")
    groups = state.get("param_groups")
    if not isinstance(groups, list) or len(groups) > 1:
        raise CheckpointDamaged(name, "has param_groups that are not a list of at most one group")
    for group in groups:
        _check_group(group)
    file = ckpt_files.OPTIMIZER_FILE
    slots: dict[int, dict[str, Any]] = {}
    for key, value in tensors.items():
        match = SLOT_KEY.fullmatch(key)
        if match is None or int(match[1]) >= len(shapes) or match[2] not in SLOTS:
            raise CheckpointDamaged(file, f"holds {_show(key)}, no AdamW slot of this adapter's")
        slots.setdefault(int(match[1]), {})[match[2]] = value
    if slots and not groups:
        raise CheckpointDamaged(file, f"holds optimizer state but {name} has no parameter group")
    for index, held in sorted(slots.items()):
        if set(held) != set(SLOTS):
            raise CheckpointDamaged(
                file, f"lacks slots of parameter {index}: {set(SLOTS) - set(held)}"
            )
        for slot in ("exp_avg", "exp_avg_sq"):
            if tuple(held[slot].shape) != shapes[index]:
                raise CheckpointDamaged(
                    file,
                    f"holds {index}.{slot} of shape {tuple(held[slot].shape)}; the adapter's "
                    f"parameter {index} is {shapes[index]}",
                )
        step = held["step"]
        if step.numel() != 1 or not 0 <= float(step) <= steps or float(step) != int(step):
            raise CheckpointDamaged(
                file, f"holds {index}.step {_show(step.tolist())}, not in [0, {steps}]"
            )
        if bool((held["exp_avg_sq"] < 0).any()):
            raise CheckpointDamaged(file, f"holds negative second moments in {index}.exp_avg_sq")


def load(
    data_dir: Path,
    row: CheckpointRow,
    host: ModelHost,
    *,
    model_id: str,
    with_optimizer: bool = False,
) -> Checkpoint:
    """Read and check checkpoint `row` for an adapter of `model_id` on `host`."""
    uri = row.uri
    directory = ckpt_files.resolve(data_dir, row.path)
    if not directory.is_dir():
        raise EngineError("checkpoint_not_found", f"no checkpoint at {uri}")
    if with_optimizer and row.kind != CheckpointKind.TRAINING:
        raise EngineError(
            "checkpoint_has_no_optimizer",
            f"{uri} is a sampler checkpoint without optimizer state; load it without the "
            "optimizer, or save with save_state",
        )
    try:
        config = ckpt_files.read_config(directory, data_dir)
        _check_model(uri, saved_model(config, row), model_id)
        lora = saved_lora(config)
        shapes = host.adapter_shapes(lora)
        # Every weight at the widest float dtype, plus the header: all a whole file can be.
        limit = 8 + HEADER_MAX + WIDEST * sum(math.prod(shape) for shape in shapes.values())
        adapter = _check_adapter(
            ckpt_files.read_tensors(
                directory, ckpt_files.ADAPTER_FILE, data_dir, config, max_bytes=limit
            ),
            shapes,
        )
        if not with_optimizer:
            return Checkpoint(lora, adapter)
        state = ckpt_files.read_trainer_state(directory, data_dir, config)
        optimizer = ckpt_files.read_tensors(
            directory,
            ckpt_files.OPTIMIZER_FILE,
            data_dir,
            config,
            max_bytes=2 * limit + 64 * len(shapes),
        )
        _check_optimizer(state, optimizer, list(shapes.values()))
    except CheckpointDamaged as damaged:
        raise invalid(uri, damaged.file, damaged.cause) from None
    return Checkpoint(lora, adapter, optimizer, state)
