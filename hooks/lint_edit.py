"""Claude Code PostToolUse hook: trio-lint on the Python file or notebook just written or edited.

Reads the hook's JSON from stdin. Findings go back to Claude as `{"decision": "block", "reason":
...}` (the edit has already happened; "block" is how a PostToolUse hook shows Claude a reason),
one line per finding: path:line:col, code, message and the fix hint. Silent (no output) when the
file is clean, is not Python, never mentions the SDK, or the event names no such file. When
trio-lint cannot be found or fails, one `systemMessage` line says so and the edit stands.

Whatever it is fed, it exits 0 and prints at most one line: the event is read with a size cap
and its fields are checked for their types; only a regular file is read (a FIFO would block, a
device never end), with its size checked first; the path is passed after `--`, so a file named
`--config=x.py` is a file; any failure of the hook itself is one `systemMessage` line.

Standard library only: it runs under whatever `python3` Claude Code finds, before any project
environment is known; trio-lint itself is found by scripts/pytrio-tool.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

LINTED_SUFFIXES = (".py", ".pyi", ".ipynb")
# trio-lint skips files that never mention an SDK module; checking first saves its start-up. A
# project may name more modules in `[tool.trio-lint] sdk-modules`; those are added per project.
SDK_MARKERS = (b"pytrio", b"tinker")
MAX_SHOWN = 30
TIMEOUT_S = 25  # trio-lint's run; the hook's own budget (hooks.json) is 30 s
WATCHDOG_S = 28  # the whole hook, should anything else block
NOT_FOUND = 127
MAX_EVENT_BYTES = 64 * 1024 * 1024  # a Write event carries the file's content
MAX_FILE_BYTES = 10 * 1024 * 1024  # trio-lint's own limit: larger files it reports, unread
MAX_CONFIG_BYTES = 1024 * 1024
MAX_PATH_CHARS = 4096


def _text(value: object, limit: int = MAX_PATH_CHARS) -> str | None:
    """`value` if it is a usable path string (non-empty, no NUL byte, bounded), else None."""
    if isinstance(value, str) and value and "\0" not in value and len(value) <= limit:
        return value
    return None


def event_cwd(event: dict[str, Any]) -> str:
    """The event's working directory when it is one, else the project's, else ours."""
    for candidate in (event.get("cwd"), os.environ.get("CLAUDE_PROJECT_DIR")):
        text = _text(candidate)
        try:
            if text is not None and Path(text).is_absolute() and Path(text).is_dir():
                return text
        except OSError:
            continue
    return str(Path.cwd())


def edited_path(event: dict[str, Any], cwd: str) -> Path | None:
    tool_input = event.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    name = _text(tool_input.get("file_path")) or _text(tool_input.get("notebook_path"))
    if name is None or not name.endswith(LINTED_SUFFIXES):
        return None
    path = Path(name)
    if not path.is_absolute():
        path = Path(cwd) / path
    return path


def read_regular(path: Path, limit: int) -> bytes | None:
    """The bytes of a regular file of at most `limit` bytes; None for anything else (missing,
    a FIFO, a device, too large, unreadable). Never blocks: the file is checked before it is
    opened, opened without waiting, and checked again once open."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (OSError, ValueError):
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        data = b""
        while len(data) <= limit:
            chunk = os.read(fd, limit + 1 - len(data))
            if not chunk:
                return data
            data += chunk
        return None
    except OSError:
        return None
    finally:
        os.close(fd)


def is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except (OSError, ValueError):
        return False


def project_markers(cwd: str) -> tuple[bytes, ...] | None:
    """The top-level packages of the `sdk-modules` configured in the pyproject.toml trio-lint will
    read (the nearest one above the working directory). None when that file cannot be read here:
    trio-lint then decides, and reports a broken config itself."""
    try:
        import tomllib  # Python 3.11+; an older python3 cannot tell, so it always lints
    except ImportError:
        return None
    start = Path(os.path.realpath(cwd))  # not Path.resolve: it raises on a symlink loop
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        try:
            if candidate.is_file():
                break
        except OSError:
            continue
    else:
        return ()
    text = read_regular(candidate, MAX_CONFIG_BYTES)
    if text is None:
        return None
    try:
        data = tomllib.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return None
    tool = data.get("tool", {})
    table = tool.get("trio-lint", {}) if isinstance(tool, dict) else None
    if not isinstance(table, dict):
        return None
    modules = table.get("sdk-modules", ())
    if isinstance(modules, str):
        modules = modules.split(",")
    if not isinstance(modules, (list, tuple)):  # a tuple: any python3 runs the hook
        return None
    names = (m.strip().split(".")[0] for m in modules if isinstance(m, str) and m.strip())
    return tuple(name.encode() for name in names if name)


def mentions_sdk(path: Path, cwd: str) -> bool:
    """Whether trio-lint should see the file: it names an SDK module, or is too large to check
    here (trio-lint reports that itself), or the project's markers cannot be read here."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return True
    except (OSError, ValueError):
        return False
    data = read_regular(path, MAX_FILE_BYTES)
    if data is None:
        return False
    extra = project_markers(cwd)
    if extra is None:
        return True
    return any(marker in data for marker in (*SDK_MARKERS, *extra))


def launcher() -> Path:
    root = _text(os.environ.get("CLAUDE_PLUGIN_ROOT")) or str(Path(__file__).resolve().parents[1])
    return Path(root) / "scripts" / "pytrio-tool"


def run_lint(path: Path, cwd: str) -> subprocess.CompletedProcess[str]:
    # `--` first: whatever the file is called, trio-lint reads it as a path, never an option.
    command = [
        str(launcher()), "trio-lint", "--output-format", "json", "--exit-zero", "--", str(path)
    ]  # fmt: skip
    return subprocess.run(
        command,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=TIMEOUT_S,
        check=False,
    )


def _field(mapping: dict[str, Any], key: str) -> str:
    value = mapping.get(key)
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        return str(value)
    return "?"


def finding_line(finding: dict[str, Any], shown_path: str) -> str:
    location = finding.get("location")
    location = location if isinstance(location, dict) else {}
    where = f"{shown_path}:{_field(location, 'row')}:{_field(location, 'column')}"
    cell = finding.get("cell")
    if isinstance(cell, int) and not isinstance(cell, bool):
        where += f" (cell {cell})"
    line = f"{where}: {_field(finding, 'code')} {_field(finding, 'message')}"
    fix = finding.get("fix")
    if isinstance(fix, dict) and isinstance(fix.get("message"), str) and fix["message"]:
        how = "trio-lint --fix applies it" if fix.get("applicability") == "safe" else "by hand"
        line += f"\n    fix: {fix['message']} ({how})"
    return line


def report(findings: list[dict[str, Any]], path: Path, cwd: str) -> str:
    try:
        shown_path = str(path.relative_to(cwd))
    except ValueError:
        shown_path = str(path)
    count = len(findings)
    head = f"trio-lint: {count} PyTRIO problem{'s' if count != 1 else ''} in {shown_path}"
    lines = [head + " (fix them before running the script):"]
    lines += [finding_line(finding, shown_path) for finding in findings[:MAX_SHOWN]]
    if count > MAX_SHOWN:
        lines.append(f"... and {count - MAX_SHOWN} more: run `trio-lint {shown_path}`")
    lines.append("`trio-lint rule CODE` explains a rule.")
    return "\n".join(lines)


def say(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")


def _last_line(text: str, default: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return (lines[-1] if lines else default)[:500]


def read_event(stream: IO[bytes]) -> dict[str, Any] | None:
    """The hook event, or None when there is none to act on (empty, too large, not JSON, not an
    object, nested too deeply to parse)."""
    data = stream.read(MAX_EVENT_BYTES + 1)
    if not data or len(data) > MAX_EVENT_BYTES:
        return None
    try:
        event = json.loads(data.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None
    return event if isinstance(event, dict) else None


def handle(event: dict[str, Any]) -> dict[str, Any] | None:
    """The one message for this event, or None."""
    cwd = event_cwd(event)
    path = edited_path(event, cwd)
    if path is None or not is_regular(path) or not mentions_sdk(path, cwd):
        return None
    try:
        process = run_lint(path, cwd)
    except (OSError, ValueError, subprocess.SubprocessError) as error:
        return {"systemMessage": f"pytrio plugin: trio-lint did not run on {path.name}: {error}"}
    if process.returncode == NOT_FOUND:
        return {"systemMessage": _last_line(process.stderr, "trio-lint not found")}
    try:
        findings = json.loads(process.stdout or "[]")
    except (ValueError, RecursionError):
        findings = None
    if process.returncode != 0 or not isinstance(findings, list):
        last = _last_line(process.stderr, f"exit {process.returncode}")
        return {"systemMessage": f"pytrio plugin: trio-lint failed on {path.name}: {last}"}
    usable = [finding for finding in findings if isinstance(finding, dict)]
    if len(usable) != len(findings):
        return {
            "systemMessage": f"pytrio plugin: trio-lint gave output the hook cannot read on"
            f" {path.name}; run `trio-lint {path}` to see its findings"
        }
    if usable:
        return {"decision": "block", "reason": report(usable, path, cwd)}
    return None


class _Watchdog(Exception):
    pass


def _expired(signum: int, frame: object) -> None:
    raise _Watchdog


def main() -> int:
    """The one guard: whatever fails in the hook is one `systemMessage` line, and exit 0."""
    message: dict[str, Any] | None = None
    alarm = hasattr(signal, "SIGALRM")
    previous = signal.signal(signal.SIGALRM, _expired) if alarm else None
    try:
        if alarm:
            signal.alarm(WATCHDOG_S)
        event = read_event(sys.stdin.buffer)
        if event is not None:
            message = handle(event)
    except _Watchdog:
        message = {"systemMessage": f"pytrio plugin: trio-lint hook gave up after {WATCHDOG_S} s"}
    except Exception as error:  # the hook's own bug: say it once, never fail the edit
        detail = f"{type(error).__name__}: {error}"[:300]
        message = {"systemMessage": f"pytrio plugin: the lint hook failed: {detail}"}
    finally:
        if alarm:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
    if message is not None:
        try:
            say(message)
            sys.stdout.flush()
        except Exception:  # stdout closed: nothing more the hook can do
            # (and nothing for the interpreter to fail on at exit: exit status 120)
            with contextlib.suppress(Exception):  # there is no one left to tell
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
