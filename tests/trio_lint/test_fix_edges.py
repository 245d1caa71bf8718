"""`--fix` at the edges of what a file can be: any mix of line endings (CR-only files too) is
fixed exactly as its LF twin and keeps its own line breaks, and a read-only file is left alone
with an io-error finding (exit 1), as ruff reports a file it cannot write (E902)."""

from __future__ import annotations

import json
import re
import stat

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.lint import BAD, FIXED, run_cli
from trio_lint import fix_source, lint_source

# --- line endings ------------------------------------------------------------------------------

_BREAK = re.compile(r"\r\n|\r|\n")


def lf(text: str) -> str:
    return _BREAK.sub("\n", text)


def breaks(text: str) -> list[str]:
    return _BREAK.findall(text)


def test_a_cr_only_file_is_fixed_to_its_last_line_by_the_console_script(project):
    source = (
        "import pytrio as trio\r"
        "\r"
        "adam = trio.AdamParams(lr=1e-4)\r"
        "params = trio.SamplingParams(max_new_tokens=64)\r"  # the last line, then a lone CR
    )
    (project / "cr.py").write_bytes(source.encode())
    run = run_cli("--no-cache", "--fix", "cr.py", cwd=project)
    assert run.code == 0, run.out + run.err
    assert "Found 2 errors (2 fixed, 0 remaining)." in run.out and "fixable" not in run.out
    fixed = source.replace("lr=", "learning_rate=").replace("max_new_tokens", "max_tokens")
    assert (project / "cr.py").read_bytes() == fixed.encode()


# Top-level statements, each a list of lines (joined with drawn line breaks).
_STATEMENTS = [
    ["adam = trio.AdamParams(lr=1e-4)"],
    ["params = SamplingParams(max_new_tokens=64)"],
    ["# a comment"],
    [""],
    ["x = trio.ModelInput.from_ints([-100, 1])"],
    ["more = trio.SamplingParams(", "    max_new_tokens=8,", ")"],
    ["if adam:", "    adam = trio.AdamParams(lr=2e-4)"],
]
_HEADS = [
    ["import pytrio as trio"],
    ["import pytrio as trio", "from pytrio import SamplingParams"],
    ["from pytrio import SamplingParams, AdamParams", "import pytrio as trio"],
]
_ENDINGS = st.sampled_from(["\n", "\r\n", "\r"])


@st.composite
def programs(draw) -> str:
    lines = draw(st.sampled_from(_HEADS)) + [
        line
        for statement in draw(st.lists(st.sampled_from(_STATEMENTS), min_size=1, max_size=4))
        for line in statement
    ]
    ends = draw(st.lists(_ENDINGS, min_size=len(lines), max_size=len(lines)))
    ends[-1] = draw(st.sampled_from(["", "\n", "\r\n", "\r", "\r\r", "\n\r"]))
    for number, line in enumerate(lines):
        # Not drawn: a blank LF line below a lone CR. When the statements between them are
        # removed (PTR001), libcst prints the two breaks side by side and they read as one
        # CRLF: a blank line is lost (the only line that can start with its own break).
        if not line and ends[number] == "\n" and "\r" in ends[:number]:
            ends[number] = "\r\n"
    return "".join(line + end for line, end in zip(lines, ends, strict=True))


def _where(diagnostics) -> list[tuple]:
    return [(d.code, d.line, d.column, d.end_line, d.end_column, d.fixable) for d in diagnostics]


def _edits(diagnostics) -> list[tuple]:
    return [
        (d.code, tuple(
            (e.location, e.end_location, lf(e.content)) for e in (d.fix.edits if d.fix else ())
        ))
        for d in diagnostics
    ]  # fmt: skip


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_any_line_endings_fix_as_their_lf_twin_and_keep_their_breaks(source: str) -> None:
    twin = lf(source)
    fixed, expected = fix_source(source, "x.py"), fix_source(twin, "x.py")
    assert lf(fixed.source) == expected.source
    # What is fixed, what remains and what still claims a fix are the same as for LF.
    assert _where(fixed.fixed) == _where(expected.fixed)
    assert _where(fixed.remaining) == _where(expected.remaining)
    if len(breaks(expected.source)) == len(breaks(twin)):
        assert breaks(fixed.source) == breaks(source)  # every line keeps its own break
    # The edits JSON and SARIF show point at the same places as the LF twin's.
    assert _edits(lint_source(source, "x.py", edits=True)) == _edits(
        lint_source(twin, "x.py", edits=True)
    )


# --- read-only files ---------------------------------------------------------------------------


def test_a_read_only_file_is_left_alone_with_an_io_error(project):
    target = project / "ro.py"
    target.write_text(BAD)
    target.chmod(0o444)
    (project / "rw.py").write_text(BAD)
    run = run_cli("--no-cache", "--fix", "--output-format", "json", "ro.py", "rw.py", cwd=project)
    assert run.code == 1, run.err
    assert target.read_text() == BAD
    assert stat.S_IMODE(target.stat().st_mode) == 0o444
    assert (project / "rw.py").read_text() == FIXED  # the other files are still fixed
    found = [d for d in json.loads(run.out) if d["filename"].endswith("ro.py")]
    assert [(d["code"], d["name"]) for d in found] == [("PTR901", "io-error")]
    assert "read-only" in found[0]["message"] and "nothing written" in found[0]["message"]
    assert sorted(p.name for p in project.iterdir()) == ["pyproject.toml", "ro.py", "rw.py"]
    # --diff writes nothing, so it still shows the fixes of a read-only file.
    run = run_cli("--no-cache", "--diff", "ro.py", cwd=project)
    assert run.code == 1 and "+adam = trio.AdamParams(learning_rate=1e-4)" in run.out
