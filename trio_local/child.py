"""The command `trio-local run` serves: started, signalled, waited for, and never outlived.

- The child runs in a process group of its own, and trio-local forwards SIGINT and SIGTERM to
  it: it gets each signal once, whether the signal went to trio-local's pid, to its process
  group or came from the terminal (which then sends it to trio-local's group only; a child
  that reads the terminal is given the foreground, as a shell does).
- The child gets PR_SET_PDEATHSIG (Linux): if trio-local dies, even by SIGKILL, the kernel
  kills the child too instead of leaving it retrying a vanished service.
- A child killed by signal N exits with 128 + N, as a shell reports it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable

FORWARDED = (signal.SIGINT, signal.SIGTERM)
# The kernel may hand a process-directed signal to any thread (the HTTP server's, torch's), and
# Python runs the handler only when the main thread next runs Python code: a main thread blocked
# without a timeout (an untimed Event.wait or waitpid) would never get to it. Waits that a
# signal must end are therefore polled this often.
SIGNAL_POLL_S = 0.25


def record_signals() -> list[int]:
    """Handle SIGINT and SIGTERM by appending them to the list returned, which the main thread
    polls. A handler runs on the main thread between two bytecodes, so it takes no lock: an
    `Event.set()` there deadlocked when it landed inside the main thread's own `Event.wait()`
    (which holds the event's lock while it returns)."""
    received: list[int] = []
    for signum in FORWARDED:
        signal.signal(signum, lambda signum, _frame: received.append(signum))
    return received


def exit_status(returncode: int) -> int:
    """A `Popen.returncode` as a shell's `$?`: -N (killed by signal N) is 128 + N."""
    return 128 - returncode if returncode < 0 else returncode


# Set in a small exec shim, not a preexec_fn: this process has threads (the HTTP server, the
# warm-up importing torch), and Python code between fork and exec could deadlock on a lock one
# of them held. The signal survives the exec; a parent that died before it was set is caught
# by the parent-pid check.
_SHIM = """
import ctypes, os, signal, sys
if sys.platform.startswith("linux"):
    ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != int(sys.argv[1]):
        sys.exit(128 + signal.SIGKILL)
try:
    os.execvp(sys.argv[2], sys.argv[2:])
except OSError as error:
    print(f"trio-local run: cannot start {sys.argv[2]}: {error.strerror}", file=sys.stderr)
    sys.exit(127)
"""


def _terminal() -> int | None:
    """The controlling terminal's fd when this process group holds its foreground."""
    try:
        fd = sys.stdin.fileno()
        return fd if os.isatty(fd) and os.tcgetpgrp(fd) == os.getpgrp() else None
    except (OSError, ValueError, AttributeError):
        return None


@contextlib.contextmanager
def _foreground(fd: int | None, pgid: int):
    """Give the terminal's foreground to `pgid` for the block, then take it back."""
    if fd is None:
        yield
        return
    previous = signal.signal(signal.SIGTTOU, signal.SIG_IGN)  # a background tcsetpgrp stops
    try:
        with contextlib.suppress(OSError):
            os.tcsetpgrp(fd, pgid)
        yield
    finally:
        with contextlib.suppress(OSError):
            os.tcsetpgrp(fd, os.getpgrp())
        signal.signal(signal.SIGTTOU, previous)


def wait_polled(process: subprocess.Popen) -> int:
    """`process.wait()`, returning to Python every SIGNAL_POLL_S so signal handlers run."""
    while True:
        try:
            return process.wait(timeout=SIGNAL_POLL_S)
        except subprocess.TimeoutExpired:
            continue


def run_child(
    command: list[str], env: dict[str, str], received: list[int], after: Callable[[], None]
) -> int:
    """Run `command` to its end, forwarding SIGINT/SIGTERM (already recorded in `received`
    or arriving later); `after` runs once it has exited. Returns its shell exit status."""
    terminal = _terminal()
    try:
        process = subprocess.Popen(
            [sys.executable, "-c", _SHIM, str(os.getpid()), *command], env=env, process_group=0
        )
    except OSError as error:
        print(f"trio-local run: cannot start {command[0]}: {error.strerror}", file=sys.stderr)
        return 127

    def forward(signum: int, _frame: object = None) -> None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signum)

    for signum in FORWARDED:
        signal.signal(signum, forward)
    for early in received:  # arrived while the service was starting
        forward(early)
    with _foreground(terminal, process.pid):
        returncode = wait_polled(process)
    after()
    return exit_status(returncode)
