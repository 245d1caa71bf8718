"""The SDK prefilter: a file that never names an SDK module is not parsed. Decided once per file,
by whoever reads its bytes (the run for a tree and stdin, `lint_document` for the library)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trio_lint.settings.config import LintConfig


def mentions_sdk(data: bytes, config: LintConfig) -> bool:
    return config.force_sdk or any(module.encode() in data for module in config.sdk_modules)
