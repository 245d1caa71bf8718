"""`trio-lint`: ruff's command-line contract (options, output formats, exit codes 0/1/2)."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from trio_lint.output.diagnostics import Applicability, Diagnostic
from trio_lint.output.version import __version__
from trio_lint.reporters import FORMATS, fixable_mark, get_renderer
from trio_lint.settings.config import ConfigError, LintConfig, load_config, with_overrides

if TYPE_CHECKING:
    from trio_lint.run.invocation import RunResult
    from trio_lint.run.request import RunRequest

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _codes(values: list[str] | None) -> tuple[str, ...] | None:
    return None if values is None else _split(values)


def _split(values: list[str]) -> tuple[str, ...]:
    """`--select A,B --select C` -> ("A", "B", "C")."""
    return tuple(code.strip() for value in values for code in value.split(",") if code.strip())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trio-lint",
        description="Check PyTRIO code for the pitfalls assistants fall into (rule codes PTR).",
        epilog="`trio-lint rule CODE` explains a rule; `trio-lint rule --all` lists them;"
        " `trio-lint server` runs the language server (stdio).",
    )
    parser.add_argument("paths", nargs="*", help="files or directories (default: .); `-` is stdin")
    parser.add_argument("--version", action="version", version=f"trio-lint {__version__}")
    parser.add_argument("--config", type=Path, help="a pyproject.toml or trio-lint .toml to use")
    selection = parser.add_argument_group("rule selection")
    selection.add_argument("--select", action="append", metavar="CODES", help="codes or prefixes")
    selection.add_argument("--extend-select", action="append", metavar="CODES")
    selection.add_argument("--ignore", action="append", metavar="CODES")
    selection.add_argument(
        "--target-version",
        help="the pytrio release the code targets, such as 0.2.8, or a line (0.2: its newest"
        " release); default: the installed pytrio, else the newest release",
    )
    selection.add_argument("--sdk-modules", help="comma-separated SDK modules (pytrio,tinker)")
    selection.add_argument(
        "--force-sdk",
        action="store_true",
        help="lint files even if they never mention an SDK module",
    )
    fixing = parser.add_argument_group("fixes")
    fixing.add_argument("--fix", action="store_true", help="apply safe fixes")
    fixing.add_argument(
        "--unsafe-fixes", action="store_true", help="also apply (or show) unsafe fixes"
    )
    fixing.add_argument(
        "--diff", action="store_true", help="print the fixes as a diff; write nothing"
    )
    fixing.add_argument("--show-fixes", action="store_true", help="list what --fix fixed")
    fixing.add_argument("--add-noqa", action="store_true", help="add `# noqa` to every finding")
    output = parser.add_argument_group("output")
    output.add_argument("--output-format", choices=FORMATS, default="full")
    output.add_argument("--statistics", action="store_true", help="counts per rule")
    output.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    output.add_argument("-q", "--quiet", action="store_true", help="print only the findings")
    files = parser.add_argument_group("files")
    files.add_argument("--exclude", action="append", metavar="PATTERNS")
    files.add_argument("--extend-exclude", action="append", metavar="PATTERNS")
    files.add_argument(
        "--force-exclude",
        action="store_true",
        help="apply excludes to files named on the command line too (for pre-commit)",
    )
    files.add_argument(
        "--markdown",
        action="store_true",
        help="also lint the ```python blocks of Markdown files found in directories",
    )
    files.add_argument(
        "--stdin-filename",
        help="the name to report for stdin (`-`, or no paths); decides the kind (.py, .md, .ipynb)",
    )
    files.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    files.add_argument("--jobs", type=int, help=argparse.SUPPRESS)
    return parser


def _configure(args: argparse.Namespace) -> tuple[LintConfig, Path]:
    from trio_lint.settings.selectors import validate_codes

    config, root = load_config(args.config)
    if root is not None:
        validate_codes(config, origin=str(args.config or root / "pyproject.toml"))
    root = root or Path.cwd()
    overrides: dict = {
        "select": _codes(args.select),
        "ignore": (config.ignore + _split(args.ignore)) if args.ignore else None,
        "extend_select": (config.extend_select + _split(args.extend_select))
        if args.extend_select
        else None,
        "exclude": _codes(args.exclude),
        "extend_exclude": (config.extend_exclude + _split(args.extend_exclude))
        if args.extend_exclude
        else None,
        "target_version": args.target_version,
        "sdk_modules": _codes([args.sdk_modules]) if args.sdk_modules else None,
        "force_sdk": True if args.force_sdk else None,
        "markdown": True if args.markdown else None,
    }
    merged = with_overrides(config, **overrides)
    if merged is not config:
        validate_codes(merged, origin="command line")
    return merged, root


def _summary(result_remaining: Sequence[Diagnostic], fixed: int, unsafe_fixes: bool) -> str:
    count = len(result_remaining)
    if count == 0 and fixed == 0:
        return "All checks passed!\n"
    lines = []
    if fixed:
        lines.append(
            f"Found {count + fixed} error{'s' if count + fixed != 1 else ''}"
            f" ({fixed} fixed, {count} remaining)."
        )
    else:
        lines.append(f"Found {count} error{'s' if count != 1 else ''}.")
    safe = sum(1 for d in result_remaining if fixable_mark(d, unsafe_fixes))
    hidden = sum(
        1
        for d in result_remaining
        if d.fix is not None and d.fix.applicability is Applicability.UNSAFE and not unsafe_fixes
    )
    if safe:
        lines.append(f"[*] {safe} fixable with the `--fix` option.")
    if hidden:
        lines.append(f"({hidden} hidden fixes can be enabled with the `--unsafe-fixes` option.)")
    return "\n".join(lines) + "\n"


def _statistics(diagnostics: Sequence[Diagnostic], unsafe_fixes: bool) -> str:
    counts = Counter(d.code for d in diagnostics)
    names = {d.code: d.name for d in diagnostics}
    fixable = {d.code for d in diagnostics if fixable_mark(d, unsafe_fixes)}
    width = max((len(str(n)) for n in counts.values()), default=1)
    return "".join(
        f"{str(n).rjust(width)}\t{code}\t{'[*] ' if code in fixable else '    '}{names[code]}\n"
        for code, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    )


def _show_fixes(fixed: Sequence[Diagnostic]) -> str:
    if not fixed:
        return ""
    by_file: dict[str, Counter] = {}
    for d in fixed:
        by_file.setdefault(d.path, Counter())[(d.code, d.name)] += 1
    lines = [f"Fixed {len(fixed)} error{'s' if len(fixed) != 1 else ''}:"]
    for path in sorted(by_file):
        lines.append(f"- {path}:")
        for (code, name), n in sorted(by_file[path].items()):
            lines.append(f"    {n} × {code} ({name})")
    return "\n".join(lines) + "\n"


def resolve_request(args: argparse.Namespace, parser: argparse.ArgumentParser) -> RunRequest:
    """The run the command line asks for, resolved once (argv + configuration). Standard input
    is `-` alone, or --stdin-filename with no paths (as ruff reads it); it is read here."""
    from trio_lint.run.request import FixMode, Output, PathSources, RunRequest, StdinSource

    paths = list(args.paths)
    stdin = paths == ["-"] or (not paths and args.stdin_filename is not None)
    if not stdin and "-" in paths:
        parser.error("`-` (stdin) cannot be combined with other paths")
    if not stdin and args.stdin_filename is not None:
        parser.error("--stdin-filename names standard input: give `-` alone, not other paths")
    if stdin and args.add_noqa:
        # ruff refuses this too: --add-noqa edits files in place and stdin is no file.
        parser.error("--add-noqa cannot be used with standard input (`-`); run it on the file")
    if args.jobs is not None and args.jobs < 1:
        parser.error("--jobs must be 1 or more")
    config, root = _configure(args)
    fix = FixMode.NONE
    if args.fix or args.diff:
        fix = FixMode.UNSAFE if args.unsafe_fixes else FixMode.SAFE
    sources = StdinSource.read(args.stdin_filename) if stdin else PathSources(tuple(paths or ["."]))
    return RunRequest(
        sources=sources,
        config=config,
        root=root,
        fix=fix,
        unsafe_fixes=args.unsafe_fixes,
        diff=args.diff,
        add_noqa=args.add_noqa,
        output=Output(
            format=args.output_format,
            statistics=args.statistics,
            show_fixes=args.show_fixes,
            quiet=args.quiet,
            exit_zero=args.exit_zero,
        ),
        use_cache=not args.no_cache,
        jobs=args.jobs,
        force_exclude=args.force_exclude,
    )


def check(argv: Sequence[str]) -> int:
    from trio_lint.run.invocation import execute

    parser = build_parser()
    request = resolve_request(parser.parse_args(argv), parser)
    if request.writes or request.add_noqa:
        _exit_on_termination()
    try:
        result = execute(request)
    except FileNotFoundError as exc:
        sys.stderr.write(f"trio-lint: error: no such file or directory: {exc}\n")
        return EXIT_ERROR
    return _report(request, result)


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _exit_on_termination() -> None:
    """SIGTERM/SIGHUP end a run that writes through SystemExit, not at once, so that a temp
    file being written is removed on the way out (signals arrive in the main thread only)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return
    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None and signal.getsignal(number) is signal.SIG_DFL:
            signal.signal(number, _terminated)


def _report(request: RunRequest, result: RunResult) -> int:
    """Print a run's outcome, the same for files and standard input. With fixes applied to
    standard input the fixed code is the output, so the report goes to stderr (as ruff does)."""
    output = request.output
    if request.add_noqa:
        if not output.quiet:
            sys.stderr.write(f"Added noqa directives to {result.files_changed} file(s).\n")
        return EXIT_CLEAN
    if request.diff:
        sys.stdout.write("".join(result.diffs))
        if not output.quiet:
            count = len(result.fixed)
            sys.stderr.write(
                f"Would fix {count} error{'s' if count != 1 else ''}"
                f" in {result.files_changed} file(s).\n"
            )
        return EXIT_FINDINGS if result.diffs else EXIT_CLEAN
    out = sys.stdout
    if result.stdin_output is not None:
        sys.stdout.buffer.write(result.stdin_output)
        sys.stdout.flush()
        out = sys.stderr
    remaining = result.diagnostics
    if output.statistics:
        out.write(_statistics(remaining, request.unsafe_fixes))
    else:
        from trio_lint.run.request import StdinSource

        render = get_renderer(output.format)
        if output.format == "full" and isinstance(request.sources, StdinSource):
            # The snippet shows what was linted (or what the fix printed), not a file on disk
            # that may carry the --stdin-filename name.
            linted = (
                result.stdin_output if result.stdin_output is not None else request.sources.data
            )
            out.write(render(remaining, texts={request.sources.name: linted}))
        else:
            out.write(render(remaining))
    if output.show_fixes and request.writes:
        out.write(_show_fixes(result.fixed))
    if not output.quiet and output.format in ("full", "concise"):
        out.write(_summary(remaining, len(result.fixed), request.unsafe_fixes))
    return EXIT_FINDINGS if remaining and not output.exit_zero else EXIT_CLEAN


def rule(argv: Sequence[str]) -> int:
    from trio_lint.output.explain import catalogue_json, catalogue_table, rule_json, rule_markdown
    from trio_lint.rules import all_rules, get_rule

    parser = argparse.ArgumentParser(prog="trio-lint rule", description="Explain a rule.")
    parser.add_argument("code", nargs="?", help="a code (PTR201) or name (hf-max-new-tokens)")
    parser.add_argument("--all", action="store_true", help="list every rule")
    parser.add_argument("--output-format", choices=("text", "json"), default="text")
    args = parser.parse_args(argv)
    if args.all:
        rules = list(all_rules())
        text = catalogue_json(rules) if args.output_format == "json" else catalogue_table(rules)
        sys.stdout.write(text)
        return EXIT_CLEAN
    if not args.code:
        parser.error("give a rule code (e.g. PTR201) or --all")
    found = get_rule(args.code)
    if found is None:
        sys.stderr.write(
            f"trio-lint: error: unknown rule `{args.code}`; see `trio-lint rule --all`\n"
        )
        return EXIT_ERROR
    if args.output_format == "json":
        import json

        sys.stdout.write(json.dumps(rule_json(found), indent=2) + "\n")
    else:
        sys.stdout.write(rule_markdown(found))
    return EXIT_CLEAN


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        if arguments and arguments[0] == "rule":
            return rule(arguments[1:])
        if arguments and arguments[0] == "server":
            from trio_lint.server import main as serve

            return serve(arguments[1:])
        if arguments and arguments[0] == "check":
            arguments = arguments[1:]
        return check(arguments)
    except ConfigError as exc:
        sys.stderr.write(f"trio-lint: error: {exc}\n")
        return EXIT_ERROR
    except KeyboardInterrupt:
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_CLEAN
    except Exception as exc:  # a trio-lint bug: exit 2 as ruff does, with the cause on stderr
        import traceback

        traceback.print_exc()
        sys.stderr.write(f"trio-lint: internal error: {type(exc).__name__}: {exc}\n")
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
