"""Helpers for running `trio-lint` on real files: the real console script (`run_cli`) where the
process is what a test checks, and `main(argv)` in this process (`run_main`) where it is not."""

from __future__ import annotations

import contextlib
import io
import locale
import signal
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

BIN = Path(sys.executable).parent
TRIO_LINT = str(BIN / "trio-lint")

BAD = textwrap.dedent(
    """\
    import pytrio as trio

    adam = trio.AdamParams(lr=1e-4)
    params = trio.SamplingParams(max_new_tokens=64)
    x = trio.ModelInput.from_ints([-100, 1])
    """
)
FIXED = BAD.replace("lr=", "learning_rate=").replace("max_new_tokens", "max_tokens")
CLEAN = "import pytrio as trio\n\nadam = trio.AdamParams(learning_rate=1e-4)\n"


@dataclass
class Run:
    code: int
    out: str
    err: str


def run_cli(*args: str, cwd: Path, stdin: str | None = None) -> Run:
    """The console script as a real process (its exit status, a real stdin pipe, a fresh
    interpreter, a timeout for what could hang)."""
    proc = subprocess.run(
        [TRIO_LINT, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


# The process state a run may change and a fresh process would not carry into the next one:
# the termination handlers a writing run installs, the recursion limit the semantic pass raises.
_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


def _stream(data: bytes = b"") -> io.TextIOWrapper:
    """A text stream with a `.buffer` (the CLI writes fixed code as bytes, reads stdin as bytes),
    encoded as the console script's own streams are under the suite's UTF-8 locale."""
    return io.TextIOWrapper(
        io.BytesIO(data), encoding="utf-8", errors="surrogateescape", newline="\n"
    )


def _text(stream: io.TextIOWrapper) -> str:
    """What `run_cli` reads from a pipe: decoded with the locale's encoding, universal newlines
    (subprocess's text mode), so that both runners give the same `Run` for the same output."""
    stream.flush()
    raw = stream.buffer.getvalue()  # type: ignore[attr-defined]
    text = raw.decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _exit_status(code: object) -> int:
    """The status the interpreter exits with for `SystemExit(code)`."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write(f"{code}\n")
    return 1


def run_main(*args: str, cwd: Path, stdin: str | bytes | None = None) -> Run:
    """`trio_lint.cli.main(args)` in this process, run from `cwd`, with the same `Run` as
    `run_cli`: stdout and stderr captured (and stdin given) as byte-backed text streams,
    `SystemExit` (argparse's errors, --version) turned into the exit code, and the process state
    a run changes put back afterwards."""
    from trio_lint.cli import main

    saved = sys.stdin, sys.stdout, sys.stderr
    handlers = {number: signal.getsignal(number) for number in _SIGNALS}
    recursion_limit = sys.getrecursionlimit()
    out, err = _stream(), _stream()
    try:
        sys.stdout, sys.stderr = out, err
        if stdin is not None:
            sys.stdin = _stream(stdin.encode() if isinstance(stdin, str) else stdin)
        with contextlib.chdir(cwd):
            try:
                code = main(list(args))
            except SystemExit as exit_:
                code = _exit_status(exit_.code)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
        for number, handler in handlers.items():
            if handler is not None and signal.getsignal(number) is not handler:
                signal.signal(number, handler)
        sys.setrecursionlimit(recursion_limit)
    return Run(code, _text(out), _text(err))


def python_programs():  # -> hypothesis SearchStrategy[str]
    """hypothesmith's programs from Python's grammar, built when first drawn: importing it and
    building the grammar take seconds, which every pytest worker would otherwise pay while it
    collects the modules that use it."""
    from hypothesis import strategies as st

    def build():
        import hypothesmith

        return hypothesmith.from_grammar()

    return st.deferred(build)
