"""Service settings shared by the CLI, `serve_in_background` and the app."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from pathlib import Path

from localfs.userdirs import app_dir
from trio_local import catalogue

STATS_PATH = "/trio-local/stats"  # per-run clock-cycle statistics (`trio-local stats`)

MIB = 1024 * 1024
MIN_API_KEY_LENGTH = 8


def default_data_dir() -> Path:
    return Path(os.environ.get("TRIO_LOCAL_DATA_DIR") or app_dir("data", "trio-local"))


def default_cache_dir() -> Path:
    return Path(os.environ.get("TRIO_LOCAL_CACHE_DIR") or app_dir("cache", "trio-local"))


def warmup_default() -> bool:
    """Warm-up is on unless TRIO_LOCAL_WARMUP says 0/false/no/off."""
    value = os.environ.get("TRIO_LOCAL_WARMUP", "1").strip().lower()
    return value not in {"0", "false", "no", "off"}


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class ConfigError(ValueError):
    """A setting that cannot work; the message names the option and the fix."""


@dataclass(frozen=True)
class ServeConfig:
    host: str = "127.0.0.1"
    port: int = 0
    data_dir: Path = field(default_factory=default_data_dir)
    api_key: str | None = None  # None: the key stored in the data dir (created on first start)
    cycle_ms: int = 0
    max_training_runs: int = 16  # concurrent runs; past it creation answers the SDK's capacity 429
    heartbeat_timeout_s: float = 180.0  # a run silent this long is ended (its client is gone)
    threads: int = 2
    control_body_limit: int = 2 * MIB
    actor_body_limit: int = 64 * MIB
    log_level: str = "warning"
    check: bool = False  # runtime data checks (trio_local/checks), reported at the end
    check_report: Path | None = None  # also write the report here as JSON (implies check)
    # Announced and served model ids; empty: announce MODEL_CATALOGUE, serve any Qwen id.
    models: tuple[str, ...] = ()
    # Longest training sequence (also the tokens per trainer event) and longest prompt +
    # max_tokens a sampler accepts.
    train_max_seq_len: int = catalogue.DEFAULT_TRAIN_MAX_SEQ_LEN
    sample_max_seq_len: int = catalogue.DEFAULT_SAMPLE_MAX_SEQ_LEN
    # From the start, import the model libraries and build the warm-up model (default: the
    # first announced id) in the background; costs that model's memory (~200-300 MB).
    warmup: bool = field(default_factory=warmup_default)
    warmup_model: str | None = None
    # Keep seeded stand-in weights in the cache directory (~150-250 MB per model id).
    weights_cache: bool = True

    @property
    def warmup_entry(self) -> catalogue.CatalogueEntry | None:
        """The model the warm-up builds, or None without warm-up."""
        if not self.warmup:
            return None
        if self.warmup_model:
            return catalogue.resolve(self.warmup_model, self.models)
        return catalogue.announced(self.models)[0]

    @property
    def trainer_limits(self) -> catalogue.RunnerLimits:
        return catalogue.trainer_limits(self.train_max_seq_len)

    @property
    def sampler_limits(self) -> catalogue.RunnerLimits:
        return catalogue.sampler_limits(self.sample_max_seq_len)

    def validate(self) -> None:
        if not is_loopback(self.host) and not self.api_key:
            raise ConfigError(
                f"refusing to bind {self.host}, which is not a loopback address, with the "
                "generated key; pass --api-key (or api_key=) with a key you chose"
            )
        if self.api_key is not None and (
            len(self.api_key) < MIN_API_KEY_LENGTH or self.api_key != "".join(self.api_key.split())
        ):
            raise ConfigError(
                f"--api-key must be at least {MIN_API_KEY_LENGTH} characters, without spaces"
            )
        if not 0 <= self.port <= 65535:
            raise ConfigError(f"--port {self.port} is not a TCP port (0 picks a free one)")
        if self.cycle_ms < 0:
            raise ConfigError("--cycle-ms must be >= 0")
        if self.max_training_runs < 1:
            raise ConfigError("--max-runs must be >= 1")
        if self.heartbeat_timeout_s < 3:
            raise ConfigError(
                "--heartbeat-timeout must be >= 3 seconds (the SDK beats at most once a second)"
            )
        if self.check_report is not None and self.check_report.is_dir():
            raise ConfigError(
                f"--check-report {self.check_report} is a directory; give a file path"
            )
        if self.threads < 1:
            raise ConfigError("--threads must be >= 1")
        for option, value in (
            ("--max-seq-len", self.train_max_seq_len),
            ("--max-sample-len", self.sample_max_seq_len),
        ):
            if not 16 <= value <= catalogue.MAX_POSITIONS:
                raise ConfigError(
                    f"{option} {value} must be between 16 and {catalogue.MAX_POSITIONS} tokens"
                )
        for model_id in self.models:
            try:
                catalogue.resolve(model_id)
            except catalogue.ModelNotServed as error:
                raise ConfigError(f"--models: {error}") from None
        if self.warmup_model is not None:
            try:
                catalogue.resolve(self.warmup_model, self.models)
            except catalogue.ModelNotServed as error:
                raise ConfigError(f"--warmup-model: {error}") from None
