"""The `trio-local` console script: names the missing extra instead of failing on an import."""

from __future__ import annotations

from pytrio_facts.extras import require_extra


def main(argv: list[str] | None = None) -> int:
    require_extra("local", "trio-local")
    from trio_local.cli import main as cli_main

    return cli_main(argv)
