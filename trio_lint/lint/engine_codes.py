"""The codes trio-lint reports about itself (PTR9xx) and their names, in one place: the linter,
the run, the language server, noqa handling and the rule modules that document them
(`rules/syntax_error.py` ...) all read them here. And the one builder of an internal error."""

from __future__ import annotations

from trio_lint.output.diagnostics import Diagnostic, Severity

SYNTAX_ERROR = "PTR900"  # the file (or a block or cell of it) does not parse
IO_ERROR = "PTR901"  # the file cannot be read or decoded
UNUSED_NOQA = "PTR902"  # a noqa comment that suppresses nothing
INTERNAL_ERROR = "PTR903"  # a trio-lint bug: a rule, or the linting of a file, raised

NAMES: dict[str, str] = {
    SYNTAX_ERROR: "syntax-error",
    IO_ERROR: "io-error",
    UNUSED_NOQA: "unused-noqa",
    INTERNAL_ERROR: "internal-error",
}
ENGINE_CODES = frozenset(NAMES)
# Like ruff's syntax errors, "could not check this file" findings show even when --select names
# other rules; only an explicit ignore hides them.
ALWAYS_SHOWN = (SYNTAX_ERROR, IO_ERROR, INTERNAL_ERROR)
# Failures that may not recur (a file unreadable for a moment, an engine bug): never cached.
UNSTABLE_CODES = frozenset({IO_ERROR, INTERNAL_ERROR})


def internal_error_message(exc: BaseException, rule: str | None = None) -> str:
    """What an internal error says: the exception, and the code of the rule that raised it (None:
    the linting of the whole file raised)."""
    where = f" in rule {rule}" if rule is not None else ""
    return f"internal error{where}: {type(exc).__name__}: {exc} (please report)"


def internal_error(path: str, exc: BaseException) -> Diagnostic:
    """An internal error of a whole file (its linting raised), on its first line."""
    return file_error(INTERNAL_ERROR, path, internal_error_message(exc))


def file_error(code: str, path: str, message: str, line: int = 1, column: int = 1) -> Diagnostic:
    """A finding about a whole file (it cannot be read, parsed or linted) under an engine code,
    at one point (its first line unless the failure has a place)."""
    return Diagnostic(
        code=code,
        name=NAMES.get(code, code),
        message=message,
        severity=Severity.ERROR,
        path=path,
        line=line,
        column=column,
        end_line=line,
        end_column=column,
    )
