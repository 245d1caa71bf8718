"""Configuration per document, found as the CLI finds it, and noticed when it changes.

The CLI reads `--config` or the nearest pyproject.toml above where it runs; the server runs for
every project an editor has open, so it looks from each document's directory (as running
`trio-lint` next to the file would). Loading and validation are trio-lint's own (`load_config`);
this module only caches the result per directory and drops it when the file's stamp moves, so an
edit of [tool.trio-lint] takes effect on the next lint even when the client never reports it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types

from trio_lint.settings.config import ConfigError, LintConfig, find_pyproject, load_config

CONFIG_NAMES = frozenset({"pyproject.toml"})


@dataclass(frozen=True)
class Settings:
    """What a lint of one document needs from its project."""

    config: LintConfig | None  # None when the configuration is invalid (see `error`)
    root: Path  # the directory per-file-ignores and excludes are relative to
    config_file: Path | None
    error: str | None = None


def _stamp(path: Path | None) -> tuple[int, int, int] | None:
    if path is None:
        return None
    try:
        stat = path.stat()
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_size, stat.st_ino)


class ConfigWatch:
    def __init__(self, explicit: Path | None = None) -> None:
        # os.path.realpath, not Path.resolve: that raises RuntimeError on a symlink loop.
        self.explicit = Path(os.path.realpath(explicit)) if explicit is not None else None
        # directory -> (config file, its stamp, settings)
        self._cache: dict[str, tuple[Path | None, object, Settings]] = {}
        # (id of the settings, path) -> (those settings, kept alive so the id stays theirs; answer)
        self._excluded: dict[tuple[int, str], tuple[Settings, bool]] = {}

    def registration(self) -> types.RegistrationParams:
        """Ask the client to report changes of every pyproject.toml (and of `--config`)."""
        patterns = ["**/pyproject.toml"]
        if self.explicit is not None:
            patterns.append(str(self.explicit))
        options = types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[types.FileSystemWatcher(glob_pattern=pattern) for pattern in patterns]
        )
        return types.RegistrationParams(
            registrations=[
                types.Registration(
                    id="trio-lint-config",
                    method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                    register_options=options,
                )
            ]
        )

    def is_config_file(self, path: str) -> bool:
        if self.explicit is not None and Path(os.path.realpath(path)) == self.explicit:
            return True
        return Path(path).name in CONFIG_NAMES

    def invalidate(self) -> None:
        self._cache.clear()
        self._excluded.clear()

    def settings_for(self, directory: Path, fallback_root: Path) -> Settings:
        """The settings of a document in `directory`; `fallback_root` is the project directory
        when no file configures trio-lint (the CLI uses its working directory)."""
        key = str(directory)
        config_file = self.explicit or find_pyproject(directory)
        stamp = _stamp(config_file)
        cached = self._cache.get(key)
        if cached is not None and cached[0] == config_file and cached[1] == stamp:
            return cached[2]
        settings = self._load(config_file, directory, fallback_root)
        self._cache[key] = (config_file, stamp, settings)
        return settings

    def _load(self, config_file: Path | None, directory: Path, fallback_root: Path) -> Settings:
        try:
            if self.explicit is not None:
                config, root = load_config(self.explicit)
            else:
                config, root = load_config(None, search_from=directory)
        except ConfigError as exc:
            return Settings(None, config_file.parent if config_file else fallback_root,
                            config_file, str(exc))  # fmt: skip
        return Settings(config, root or fallback_root, config_file)

    def excluded(self, settings: Settings, path: str) -> bool:
        """Whether the CLI would skip this file under `--force-exclude` (as pre-commit runs it):
        an editor opens excluded files too, and they get no diagnostics."""
        if settings.config is None or not Path(path).is_absolute():
            return False
        key = (id(settings), path)
        known = self._excluded.get(key)
        if known is not None and known[0] is settings:
            return known[1]
        from trio_lint.run.discovery import Walker

        found = Walker(settings.config, settings.root).excluded(path, is_dir=False)
        self._excluded[key] = (settings, found)
        return found
