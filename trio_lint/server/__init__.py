"""`trio-lint server`: trio-lint as a Language Server over stdio (diagnostics as you type, quick
fixes, `# noqa` actions, rule docs on hover). Needs the `lsp` extra (pygls); the linter itself
never imports this package, so lint-only installs stay light."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

INSTALL_HINT = (
    "trio-lint: error: the language server needs pygls; install the `lsp` extra:"
    " pip install 'pytrio-skill[lsp]'\n"
)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="trio-lint server",
        description="Run trio-lint as a Language Server over stdio (for editors and assistants).",
    )
    parser.add_argument(
        "--config", type=Path, help="a pyproject.toml or trio-lint .toml for every document"
    )
    parser.add_argument(
        "--debounce-ms",
        type=float,
        default=10.0,
        help="changes arriving while a lint runs are gathered this long into one lint (default 10)",
    )
    args = parser.parse_args(list(argv))
    if args.debounce_ms < 0:
        parser.error("--debounce-ms must be 0 or more")
    if args.config is not None and not args.config.is_file():
        parser.error(f"--config: file not found: {args.config}")
    try:
        from trio_lint.server.app import build
    except ImportError as exc:
        if exc.name not in ("pygls", "lsprotocol") and not str(exc.name).startswith("pygls."):
            raise
        sys.stderr.write(INSTALL_HINT)
        return 2
    from trio_lint.server.transport import serve_stdio

    return serve_stdio(build(args.config, args.debounce_ms / 1000))
