"""Claude Code PostToolUse hook: trio-lint on the Python file or notebook just written or edited.

Reads the hook's JSON from stdin. Findings go back to Claude as `{"decision": "block", "reason":
...}` (the edit has already happened; "block" is how a PostToolUse hook shows Claude a reason),
one line per finding: path:line:col, code, message and the fix hint. Silent (no output) when the
file is clean, is not Python, or never mentions the SDK. When trio-lint cannot be found or fails,
one `systemMessage` line says so and the edit stands: the hook always exits 0.

Standard library only: it runs under whatever `python3` Claude Code finds, before any project
environment is known; trio-lint itself is found by scripts/pytrio-tool.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

LINTED_SUFFIXES = (".py", ".pyi", ".ipynb")
# trio-lint skips files that never mention an SDK module; checking first saves its start-up. A
# project may name more modules in `[tool.trio-lint] sdk-modules`; those are added per project.
SDK_MARKERS = (b"pytrio", b"tinker")
MAX_SHOWN = 30
TIMEOUT_S = 25
NOT_FOUND = 127


def edited_path(event: dict) -> Path | None:
    tool_input = event.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    name = tool_input.get("file_path") or tool_input.get("notebook_path")
    if not isinstance(name, str) or not name.endswith(LINTED_SUFFIXES):
        return None
    path = Path(name)
    if not path.is_absolute():
        path = Path(event.get("cwd") or Path.cwd()) / path
    return path


def project_markers(cwd: str) -> tuple[bytes, ...] | None:
    """The top-level packages of the `sdk-modules` configured in the pyproject.toml trio-lint will
    read (the nearest one above the working directory). None when that file cannot be read here:
    trio-lint then decides, and reports a broken config itself."""
    try:
        import tomllib  # Python 3.11+; an older python3 cannot tell, so it always lints
    except ImportError:
        return None
    start = Path(cwd).resolve()
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            break
    else:
        return ()
    try:
        data = tomllib.loads(candidate.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    table = data.get("tool", {}).get("trio-lint", {}) if isinstance(data, dict) else {}
    modules = table.get("sdk-modules", ()) if isinstance(table, dict) else ()
    if isinstance(modules, str):
        modules = modules.split(",")
    if not isinstance(modules, (list, tuple)):
        return None
    names = (m.strip().split(".")[0] for m in modules if isinstance(m, str) and m.strip())
    return tuple(name.encode() for name in names)


def mentions_sdk(path: Path, cwd: str) -> bool:
    try:
        data = path.read_bytes()
    except OSError:
        return False
    extra = project_markers(cwd)
    if extra is None:
        return True
    return any(marker in data for marker in (*SDK_MARKERS, *extra))


def launcher() -> Path:
    root = os.environ.get("CLAUDE_PLUGIN_ROOT") or Path(__file__).resolve().parents[1]
    return Path(root) / "scripts" / "pytrio-tool"


def run_lint(path: Path, cwd: str) -> subprocess.CompletedProcess[str]:
    command = [str(launcher()), "trio-lint", "--output-format", "json", "--exit-zero", str(path)]
    return subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )


def finding_line(finding: dict, shown_path: str) -> str:
    location = finding.get("location") or {}
    where = f"{shown_path}:{location.get('row', '?')}:{location.get('column', '?')}"
    cell = finding.get("cell")
    if cell is not None:
        where += f" (cell {cell})"
    line = f"{where}: {finding.get('code')} {finding.get('message')}"
    fix = finding.get("fix")
    if isinstance(fix, dict) and fix.get("message"):
        how = "trio-lint --fix applies it" if fix.get("applicability") == "safe" else "by hand"
        line += f"\n    fix: {fix['message']} ({how})"
    return line


def report(findings: list[dict], path: Path, cwd: str) -> str:
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


def say(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")


def main() -> int:
    try:
        event = json.loads(sys.stdin.read() or "{}")
    except json.JSONDecodeError:
        return 0
    if not isinstance(event, dict):
        return 0
    path = edited_path(event)
    if path is None:
        return 0
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else str(Path.cwd())
    if not mentions_sdk(path, cwd):
        return 0
    try:
        process = run_lint(path, cwd)
    except (OSError, subprocess.TimeoutExpired) as error:
        say({"systemMessage": f"pytrio plugin: trio-lint did not run on {path.name}: {error}"})
        return 0
    if process.returncode == NOT_FOUND:
        last = (process.stderr.strip().splitlines() or ["trio-lint not found"])[-1]
        say({"systemMessage": last})
        return 0
    try:
        findings = json.loads(process.stdout or "[]")
    except json.JSONDecodeError:
        findings = None
    if process.returncode != 0 or not isinstance(findings, list):
        last = (process.stderr.strip().splitlines() or [f"exit {process.returncode}"])[-1]
        say({"systemMessage": f"pytrio plugin: trio-lint failed on {path.name}: {last}"})
        return 0
    if findings:
        say({"decision": "block", "reason": report(findings, path, cwd)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
