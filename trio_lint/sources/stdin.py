"""`trio-lint -`: the source comes from standard input and is reported as --stdin-filename."""

from __future__ import annotations

import sys

DEFAULT_NAME = "-"


def read_stdin() -> bytes:
    return sys.stdin.buffer.read()
