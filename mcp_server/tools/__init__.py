"""One module per tool, named after it. `ALL_TOOLS` is the order tools/list publishes."""

from typing import Any

from mcp_server.spec import ToolSpec
from mcp_server.tools import (
    create_training_run,
    delete_checkpoint,
    end_training_run,
    evaluate,
    get_training_run,
    lint_code,
    list_checkpoints,
    list_models,
    list_training_runs,
    plot_loss,
    resume_training_run,
    sample,
    save_checkpoint,
    train_on_rewards,
    train_sft,
    train_step,
)

# Each SPEC is checked against its own models where it is built; the list holds them all.
ALL_TOOLS: list[ToolSpec[Any, Any]] = [
    list_models.SPEC,
    list_training_runs.SPEC,
    get_training_run.SPEC,
    list_checkpoints.SPEC,
    create_training_run.SPEC,
    train_sft.SPEC,
    train_step.SPEC,
    sample.SPEC,
    evaluate.SPEC,
    train_on_rewards.SPEC,
    save_checkpoint.SPEC,
    resume_training_run.SPEC,
    end_training_run.SPEC,
    delete_checkpoint.SPEC,
    lint_code.SPEC,
    plot_loss.SPEC,
]
