"""`[tool.trio-lint]` configuration: loading, validation (errors name the key), selection."""

from __future__ import annotations

import difflib
import json
import os
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from trio_lint.run.digest import digest
from trio_lint.settings.target_version import default_version, resolve_version


def check_target_version(value: object) -> str:
    """Any released pytrio ("0.2.8") or a line ("0.2", its newest release) -> the release."""
    return resolve_version(value)


DEFAULT_EXCLUDES = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".trio_lint_cache",
    "__pycache__",
    "__pypackages__",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    ".eggs",
    "*.egg-info",
)


class ConfigError(Exception):
    """Bad configuration or option: the message names the key and how to fix it (exit code 2)."""


# A plain dataclass validated by hand below, not a pydantic model: the config is read on every
# `trio-lint` start and importing pydantic costs ~0.1 s, more than a whole warm run. The table is
# small and flat, so the field annotations below drive the validation (one source of truth).
@dataclass(frozen=True)
class LintConfig:
    """Settings after merging pyproject and command line (fields: snake_case of the keys)."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    exclude: tuple[str, ...] = DEFAULT_EXCLUDES
    extend_exclude: tuple[str, ...] = ()
    sdk_modules: tuple[str, ...] = ("pytrio",)
    trainable_models: tuple[str, ...] = ()
    target_version: str = field(default_factory=default_version)
    # Lint files even when they never mention an SDK module (skips the byte prefilter).
    force_sdk: bool = False
    # Also lint the ```python blocks of Markdown files found below a directory (opt-in, as ruff
    # does not lint Markdown either); a Markdown file named on the command line is always linted.
    markdown: bool = False
    respect_gitignore: bool = True
    cache_dir: str = ".trio_lint_cache"

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "target_version", check_target_version(self.target_version))
        except ValueError as exc:
            raise ConfigError(
                f"invalid value for `target-version`: {exc} (got {self.target_version!r})."
            ) from None

    def fingerprint(self) -> str:
        """Stable hash of everything that changes findings (cache key part)."""
        data = {
            key: getattr(self, name)
            for key, name in FIELD_NAMES.items()
            if name not in ("exclude", "extend_exclude", "cache_dir")
        }
        return digest(json.dumps(data, sort_keys=True), 8)


def _strings(value: object) -> tuple[str, ...]:
    if isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise ValueError('expected a list of strings, such as `["PTR1"]`')


def _string_table(value: object) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, dict):
        raise ValueError('expected a table of lists, such as `{"tests/*" = ["PTR1"]}`')
    table = {}
    for pattern, codes in value.items():
        try:
            table[str(pattern)] = _strings(codes)
        except ValueError as exc:
            raise ValueError(f"under `{pattern}`: {exc}") from None
    return table


def _boolean(value: object) -> bool:
    if isinstance(value, bool):
        return value
    raise ValueError("expected `true` or `false`")


def _string(value: object) -> str:
    if isinstance(value, str) and value:
        return value
    raise ValueError("expected a non-empty string")


# Each annotation of LintConfig maps to the parser of that TOML shape.
_PARSERS: dict[str, Callable[[object], Any]] = {
    "tuple[str, ...] | None": _strings,
    "tuple[str, ...]": _strings,
    "dict[str, tuple[str, ...]]": _string_table,
    "bool": _boolean,
    "str": _string,
}
FIELD_NAMES = {f.name.replace("_", "-"): f.name for f in fields(LintConfig)}
# The annotations are strings (`from __future__ import annotations`): the keys of _PARSERS.
_ANNOTATIONS = {f.name: str(f.type) for f in fields(LintConfig)}
KNOWN_KEYS = sorted(FIELD_NAMES)


def suggest(word: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1)
    return f" Did you mean `{close[0]}`?" if close else ""


def config_from_mapping(data: dict[str, Any], *, origin: str) -> LintConfig:
    """Validate a [tool.trio-lint] table; unknown keys, bad values, unknown codes: ConfigError."""
    for key in data:
        if key not in KNOWN_KEYS:
            raise ConfigError(
                f"{origin}: unknown key `{key}` in [tool.trio-lint].{suggest(key, KNOWN_KEYS)}"
                f" Known keys: {', '.join(KNOWN_KEYS)}."
            )
    values: dict[str, Any] = {}
    for key, value in data.items():
        name = FIELD_NAMES[key]
        try:
            values[name] = _PARSERS[_ANNOTATIONS[name]](value)
        except ValueError as exc:
            raise ConfigError(
                f"{origin}: invalid value for `{key}`: {exc} (got {shown(value)})."
            ) from None
    try:
        config = LintConfig(**values)
    except ConfigError as exc:
        raise ConfigError(f"{origin}: {exc}") from None
    return config


def shown(value: object) -> str:
    """`repr` for an error message, bounded: a value nested 10,000 deep must not make the
    message itself fail (the builtin repr raises RecursionError) nor fill the screen."""
    import reprlib

    limited = reprlib.Repr()
    limited.maxlevel, limited.maxstring, limited.maxother = 3, 60, 60
    return limited.repr(value)


def find_pyproject(start: Path) -> Path | None:
    # os.path.realpath, not Path.resolve: that raises RuntimeError on a symlink loop.
    start = Path(os.path.realpath(start))
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        try:
            if candidate.is_file():
                return candidate
        except OSError:
            continue  # a directory we may not look into: as if it held none
    return None


def _read_toml(path: Path) -> dict[str, Any]:
    """The TOML at `path`; ConfigError naming the file for anything that keeps it from being
    read: missing, not a regular file (a FIFO would block forever), too large, not UTF-8, not
    TOML, nested too deeply for the parser."""
    from trio_lint.run.fileio import read_regular

    try:
        data = read_regular(str(path))
    except FileNotFoundError:
        raise ConfigError(f"--config: file not found: {path}") from None
    except OSError as exc:
        # A file that is linted is skipped with this reason; a configuration is not skipped.
        reason = str(exc.strerror or exc).removesuffix("; skipped")
        raise ConfigError(f"{path}: cannot read the configuration: {reason}") from None
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(
            f"{path}: cannot be read: its values are nested too deeply for the TOML parser"
        ) from None


def load_config(
    path: Path | None, *, search_from: Path | None = None
) -> tuple[LintConfig, Path | None]:
    """Read `path` (a pyproject.toml or a trio-lint .toml) or the nearest pyproject.toml.

    Returns the config and the directory it applies from (the project root, for per-file-ignores
    and the cache), or the defaults and None when no file configures trio-lint."""
    explicit = path is not None
    if path is None:
        path = find_pyproject(search_from or Path.cwd())
        if path is None:
            return LintConfig(), None
    data = _read_toml(path)
    if path.name == "pyproject.toml" or "tool" in data:
        tool = data.get("tool", {})
        if not isinstance(tool, dict):
            raise ConfigError(
                f"{path}: `tool` must be a table (such as `[tool.trio-lint]`), got {shown(tool)}."
            )
        table = tool.get("trio-lint")
        if table is None:
            if explicit:
                raise ConfigError(f"{path}: no [tool.trio-lint] table.")
            return LintConfig(), path.parent
    else:
        table = data  # a dedicated trio-lint.toml holds the keys at top level
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.trio-lint] must be a table, got {shown(table)}.")
    return config_from_mapping(table, origin=str(path)), path.parent


def with_overrides(config: LintConfig, **overrides: Any) -> LintConfig:
    """Apply command-line values (None means "not given")."""
    given = {key: value for key, value in overrides.items() if value is not None}
    if not given:
        return config
    if "target_version" in given:
        try:
            given["target_version"] = check_target_version(given["target_version"])
        except ValueError as exc:
            raise ConfigError(
                f"--target-version: {exc} (got {given['target_version']!r})."
            ) from None
    return replace(config, **given)
