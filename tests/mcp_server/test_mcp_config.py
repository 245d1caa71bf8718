"""Settings come from trio-mcp.toml or [tool.trio-mcp]; flags override; errors name the key."""

from pathlib import Path

import pytest

from mcp_server.cli import overrides_from, parser
from mcp_server.config import ConfigError, load_config, parse_override


def test_defaults_without_any_file(tmp_path: Path) -> None:
    config = load_config(cwd=tmp_path)
    assert config.backend == "auto"
    assert config.telemetry is False
    assert config.read_only is False


def test_own_file_wins_over_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.trio-mcp]\nmax-rank = 8\n")
    assert load_config(cwd=tmp_path).max_rank == 8
    (tmp_path / "trio-mcp.toml").write_text("max_rank = 16\nread-only = true\n")
    config = load_config(cwd=tmp_path)
    assert (config.max_rank, config.read_only) == (16, True)


def test_flags_override_the_file(tmp_path: Path) -> None:
    (tmp_path / "trio-mcp.toml").write_text("max_rank = 16\nallow_delete = true\n")
    args = parser().parse_args(["--set", "max_rank=32", "--no-delete", "--backend", "local"])
    config = load_config(cwd=tmp_path, overrides=overrides_from(args))
    assert (config.max_rank, config.allow_delete, config.backend) == (32, False, "local")


def test_set_reads_toml_values() -> None:
    assert parse_override("allowed_models=['a', 'b']") == ("allowed_models", ["a", "b"])
    assert parse_override("max-learning-rate=0.001") == ("max_learning_rate", 0.001)
    assert parse_override("backend=local") == ("backend", "local")
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        parse_override("max_rank")


def test_unknown_or_invalid_setting_names_key_and_source(tmp_path: Path) -> None:
    (tmp_path / "trio-mcp.toml").write_text("max_rnak = 3\n")
    with pytest.raises(
        ConfigError, match=r"trio-mcp.toml.*max_rnak: unknown setting \(known: backend"
    ):
        load_config(cwd=tmp_path)
    (tmp_path / "trio-mcp.toml").unlink()
    with pytest.raises(ConfigError, match="min_rank: Input should be greater than or equal to 4"):
        load_config(cwd=tmp_path, overrides={"min_rank": 0})


def test_contradictory_ranges_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="min_rank 32 is above max_rank 8"):
        load_config(cwd=tmp_path, overrides={"min_rank": 32, "max_rank": 8})
