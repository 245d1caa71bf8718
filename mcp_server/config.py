"""Server configuration: the guards' limits, the backend choice, the audit log.

Read from `--config PATH`, else `./trio-mcp.toml`, else `[tool.trio-mcp]` in `./pyproject.toml`;
command-line flags override the file. Keys use snake_case (dashes are accepted and normalised).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from localfs.userdirs import app_dir
from pytrio_facts import LIMITS

CONFIG_FILE = "trio-mcp.toml"
PYPROJECT_TABLE = "trio-mcp"


def default_audit_log() -> Path:
    return Path(app_dir("state", "trio-mcp")) / "audit.jsonl"


class Config(BaseModel):
    """Every setting a refusal can name. Defaults suit an agent on a laptop against trio-local."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    backend: Literal["auto", "local", "remote"] = Field(
        "auto",
        description="auto: the PyTRIO service when an API key is configured, else trio-local.",
    )
    telemetry: bool = Field(False, description="Let the SDK send its telemetry (off by default).")
    read_only: bool = Field(False, description="Refuse every tool that changes state.")
    allow_delete: bool = Field(
        True, description="Allow delete_checkpoint (always with confirmation)."
    )
    allowed_models: list[str] = Field(
        default_factory=list,
        description="Base models runs may use; empty means all the backend lists.",
    )
    min_rank: int = Field(
        LIMITS.lora_rank_min,
        ge=LIMITS.lora_rank_min,
        le=LIMITS.lora_rank_max,
        description="Smallest LoRA rank a run may use (within the SDK's own bounds).",
    )
    max_rank: int = Field(
        LIMITS.lora_rank_max,
        ge=LIMITS.lora_rank_min,
        le=LIMITS.lora_rank_max,
        description="Largest LoRA rank a run may create, resume, train or sample.",
    )
    max_checkpoint_name_length: int = Field(
        LIMITS.checkpoint_name_max_length,
        ge=1,
        le=LIMITS.checkpoint_name_max_length,
        description="Longest checkpoint name save_checkpoint accepts (the SDK allows "
        f"{LIMITS.checkpoint_name_max_length}; lower it to keep names short).",
    )
    min_learning_rate: float = Field(1e-7, gt=0, description="Smallest Adam learning rate.")
    max_learning_rate: float = Field(1e-2, gt=0, description="Largest Adam learning rate.")
    max_examples_per_call: int = Field(512, ge=1, description="Examples or datums in one call.")
    max_tokens_per_call: int = Field(262_144, ge=1, description="Tokens trained in one call.")
    max_tokens_per_example: int = Field(4096, ge=2, description="Tokens in one example or datum.")
    max_steps_per_call: int = Field(200, ge=1, description="Optimizer steps in one train_sft call.")
    max_session_steps: int = Field(
        2000,
        ge=1,
        description="Optimizer steps per session: what was spent is kept in the ledger, so a "
        "restart does not grant a fresh budget.",
    )
    max_session_tokens: int = Field(
        5_000_000, ge=1, description="Tokens trained per session (kept in the ledger too)."
    )
    max_concurrent_runs: int = Field(
        4,
        ge=1,
        description="Training runs open at once (end_training_run or the idle timeout frees one).",
    )
    max_sample_tokens: int = Field(1024, ge=1, description="max_tokens of one sample call.")
    max_num_samples: int = Field(16, ge=1, description="num_samples of one sample call.")
    max_rollouts: int = Field(
        4096, ge=1, description="Rollouts sample keeps for train_on_rewards (oldest dropped)."
    )
    rollout_ttl_s: float = Field(
        3600, gt=0, description="Seconds a rollout stays usable by train_on_rewards."
    )
    divergence_factor: float = Field(
        4.0,
        gt=1,
        description="Stop train_sft when a step's loss exceeds this multiple of the first.",
    )
    audit_log: Path = Field(
        default_factory=default_audit_log,
        description="Append-only JSONL log (under $XDG_STATE_HOME when it is set).",
        json_schema_extra={"doc_default": "~/.local/state/trio-mcp/audit.jsonl"},
    )
    eager_backend: bool = Field(
        True, description="Start the backend when the server starts, not at the first call."
    )
    local_data_dir: Literal["temporary"] | Path | None = Field(
        None,
        description="Where the local backend keeps runs and checkpoints, kept across restarts "
        "(one server per directory): trio-local's own data dir unless set ($TRIO_LOCAL_DATA_DIR, "
        "else under $XDG_DATA_HOME); 'temporary' for a throwaway dir removed when the server "
        "stops.",
        json_schema_extra={"doc_default": "~/.local/share/trio-local"},
    )

    ledger_file: Literal["memory"] | Path | None = Field(
        None,
        description="Where the budget spent and each checkpoint's step are kept across restarts: "
        "beside the local backend's data (trio-mcp-ledger.json in its data dir; in memory for "
        "a 'temporary' one), or ledger-remote.json beside the audit log for the PyTRIO service. "
        "'memory' keeps them for this process only (each restart grants a fresh budget).",
        json_schema_extra={"doc_default": "~/.local/share/trio-local/trio-mcp-ledger.json"},
    )
    idle_run_timeout_s: float = Field(
        1800.0,
        ge=0,
        description="End a training run no call has used for this many seconds, freeing its slot "
        "(its checkpoints stay); 0 keeps idle runs open.",
    )
    connect_timeout_s: float = Field(
        15.0,
        gt=0,
        le=600,
        description="How long a call waits for an unreachable PyTRIO service before it answers "
        "that the service cannot be reached (the SDK alone retries for many minutes).",
    )

    @field_validator("audit_log")
    @classmethod
    def _expand(cls, value: Path) -> Path:
        return value.expanduser()

    @field_validator("local_data_dir", "ledger_file")
    @classmethod
    def _expand_data_dir(cls, value: Path | str | None) -> Path | str | None:
        return value.expanduser() if isinstance(value, Path) else value

    @model_validator(mode="after")
    def _ranges(self) -> Config:
        if self.min_rank > self.max_rank:
            raise ValueError(f"min_rank {self.min_rank} is above max_rank {self.max_rank}")
        if self.min_learning_rate > self.max_learning_rate:
            raise ValueError("min_learning_rate is above max_learning_rate")
        return self


class ConfigError(Exception):
    """The configuration file or a flag is invalid; the message names the key and the file."""


def _normalise(table: dict[str, Any]) -> dict[str, Any]:
    return {key.replace("-", "_"): value for key, value in table.items()}


def find_config_table(cwd: Path, explicit: Path | None) -> tuple[dict[str, Any], str]:
    """Return the settings table and where it came from (for error messages)."""
    if explicit is not None:
        if not explicit.is_file():
            raise ConfigError(f"config file {explicit} does not exist")
        return _load_toml(explicit), str(explicit)
    own = cwd / CONFIG_FILE
    if own.is_file():
        return _load_toml(own), str(own)
    pyproject = cwd / "pyproject.toml"
    if pyproject.is_file():
        table = _load_toml(pyproject).get("tool", {}).get(PYPROJECT_TABLE)
        if isinstance(table, dict):
            return table, f"{pyproject} [tool.{PYPROJECT_TABLE}]"
    return {}, "defaults"


def _load_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc


def parse_override(item: str) -> tuple[str, Any]:
    """`key=value` from `--set`; the value is read as TOML so numbers, booleans and lists work."""
    key, sep, raw = item.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"--set expects KEY=VALUE, got {item!r}")
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw  # a bare word such as `local` is a string
    return key.strip().replace("-", "_"), value


def load_config(
    cwd: Path | None = None, explicit: Path | None = None, overrides: dict[str, Any] | None = None
) -> Config:
    table, source = find_config_table(cwd or Path.cwd(), explicit)
    merged = _normalise(table) | _normalise(overrides or {})
    try:
        return Config.model_validate(merged)
    except ValidationError as exc:
        problems = "; ".join(_describe(err) for err in exc.errors())
        raise ConfigError(
            f"invalid trio-mcp settings (from {source} and flags): {problems}"
        ) from None


def _describe(err: Any) -> str:
    key = ".".join(str(p) for p in err["loc"]) or "config"
    if err["type"] == "extra_forbidden":
        return f"{key}: unknown setting (known: {', '.join(Config.model_fields)})"
    return f"{key}: {err['msg']}"
