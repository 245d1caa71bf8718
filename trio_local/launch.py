"""The `trio-local` console script: names the missing extra instead of failing on an import."""

from __future__ import annotations

import logging
import os
import sys
from typing import NoReturn

from pytrio_facts.extras import require_extra


def main(argv: list[str] | None = None) -> NoReturn:
    require_extra("local", "trio-local")
    from trio_local.cli import main as cli_main

    code = cli_main(argv)
    # The service is stopped and its files closed by now; what is left are daemon threads that
    # may be inside torch (the warm-up, the engine's worker). Interpreter finalisation under
    # them can crash in C (SIGSEGV, or "terminate called without an active exception"), which
    # would replace the child's exit status with 139 or 134: leave without finalising.
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
