"""`trio-lint server` over stdio, driven by pytest-lsp's client with VS Code's capabilities (plus
notebook support): what it reports and every edit it offers are checked against the trio-lint
console script on the same text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.trio_lint.server.lsp_helpers import (
    BUGGY,
    CLEAN,
    TRIO_LINT,
    apply,
    capabilities,
    change_document,
    cli,
    cli_fixed,
    close_document,
    code_actions,
    diagnostics,
    edit_of,
    make_client,
    open_document,
    start_session,
    wait_for,
)

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("workspace")


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(server_command=[TRIO_LINT, "server"], client_factory=make_client),
)
async def client(lsp_client: LanguageClient, workspace: Path):
    await start_session(lsp_client, workspace, capabilities())
    yield
    await lsp_client.shutdown_session()


def project(workspace: Path, name: str, table: str = "") -> Path:
    """A project directory with its own pyproject.toml (config lookup stops there)."""
    directory = workspace / name
    directory.mkdir()
    (directory / "pyproject.toml").write_text(f"[project]\nname = '{name}'\n{table}")
    return directory


def cli_findings(directory: Path, name: str, text: str, *options: str) -> list[tuple]:
    """(code, 0-based line, 0-based column, end line, end column) as the console script reports
    them (the texts here are ASCII: a character column is a UTF-16 column)."""
    (directory / name).write_text(text)
    result = cli("--no-cache", "--output-format", "json", *options, name, cwd=directory)
    assert result.returncode in (0, 1), result.stderr
    return sorted(
        (
            d["code"],
            d["location"]["row"] - 1,
            d["location"]["column"] - 1,
            d["end_location"]["row"] - 1,
            d["end_location"]["column"] - 1,
        )
        for d in json.loads(result.stdout)
    )


def found(items: list[types.Diagnostic]) -> list[tuple]:
    return sorted(
        (d.code, d.range.start.line, d.range.start.character, d.range.end.line,
         d.range.end.character)
        for d in items
    )  # fmt: skip


async def test_diagnostics_match_the_cli_and_clear_when_fixed(client: LanguageClient, workspace):
    directory = project(workspace, "appear")
    path = directory / "train.py"
    published = await open_document(client, path, BUGGY)
    assert found(published) == cli_findings(directory, "cli_train.py", BUGGY)
    assert {d.code for d in published} >= {"PTR001", "PTR102", "PTR201", "PTR202", "PTR207"}
    lr = next(d for d in published if d.code == "PTR202")
    assert lr.source == "trio-lint"
    assert lr.severity == types.DiagnosticSeverity.Error
    assert lr.message.endswith("(hf-lr)\nhelp: Rename to `learning_rate`")
    dropped = next(d for d in published if d.code == "PTR102")
    assert dropped.message.endswith("(unsafe fix)")
    assert BUGGY.splitlines()[lr.range.start.line][lr.range.start.character :].startswith("lr=")

    fixed = cli_fixed(directory, "fixed.py", BUGGY, "--fix", "--unsafe-fixes")
    fixed = fixed.replace("rank=4096", "rank=16")  # PTR207 has no automatic fix
    assert await change_document(client, path, fixed, 2) == []

    # A save publishes again (from the stored lint: the text did not change).
    since = len(client.published)
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(path.as_uri()))
    )
    assert await diagnostics(client, path.as_uri(), since) == []
    close_document(client, path)


async def test_noqa_comments_are_honoured(client: LanguageClient, workspace):
    directory = project(workspace, "noqa")
    text = BUGGY.replace("betas=(0.9, 0.95))", "betas=(0.9, 0.95))  # noqa: PTR202")
    published = await open_document(client, directory / "train.py", text)
    codes = {d.code for d in published}
    assert "PTR202" not in codes and "PTR203" in codes
    assert found(published) == cli_findings(directory, "cli.py", text)


async def test_fix_all_is_the_cli_fix_and_leaves_unsafe_fixes(client: LanguageClient, workspace):
    directory = project(workspace, "fixall")
    path = directory / "train.py"
    await open_document(client, path, BUGGY)
    actions = await code_actions(client, path.as_uri(), BUGGY, only=["source.fixAll"])
    assert [a.kind for a in actions] == ["source.fixAll.trio-lint"]
    edit = await edit_of(client, actions[0])
    after = apply(BUGGY, edit.changes[path.as_uri()])
    assert after == cli_fixed(directory, "cli.py", BUGGY, "--fix")
    assert "training.optim_step(adam)\n" in after  # the unsafe PTR102 fix is not applied
    remaining = await change_document(client, path, after, 2)
    assert {d.code for d in remaining} == {"PTR102", "PTR207"}
    assert found(remaining) == cli_findings(directory, "cli_after.py", after)


async def apply_fixes_one_by_one(client, path: Path, text: str, *, unsafe: bool) -> str:
    """Apply the first offered quick fix, re-lint, repeat until no fix is offered."""
    version = 1
    for _ in range(20):
        actions = await code_actions(client, path.as_uri(), text, only=["quickfix"])
        fixes = [a for a in actions if "noqa" not in a.title]
        if not unsafe:
            fixes = [a for a in fixes if "unsafe" not in a.title]
        if not fixes:
            return text
        edit = await edit_of(client, fixes[0])
        assert list(edit.changes) == [path.as_uri()]
        text = apply(text, edit.changes[path.as_uri()])
        version += 1
        await change_document(client, path, text, version)
    raise AssertionError("quick fixes did not converge")


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
async def test_each_quick_fix_changes_the_text_as_the_cli_does(
    client: LanguageClient, workspace, unsafe: bool
):
    directory = project(workspace, f"quickfix_{unsafe}")
    path = directory / "train.py"
    await open_document(client, path, BUGGY)
    line = BUGGY.splitlines().index("training.optim_step(adam)")
    actions = await code_actions(client, path.as_uri(), BUGGY, only=["quickfix"], line=line)
    unsafe_fix = next(a for a in actions if a.diagnostics and a.diagnostics[0].code == "PTR102"
                      and "noqa" not in a.title)  # fmt: skip
    assert "unsafe" in unsafe_fix.title and not unsafe_fix.is_preferred
    after = await apply_fixes_one_by_one(client, path, BUGGY, unsafe=unsafe)
    options = ("--fix", "--unsafe-fixes") if unsafe else ("--fix",)
    assert after == cli_fixed(directory, "cli.py", BUGGY, *options)
    close_document(client, path)


async def test_noqa_action_writes_the_cli_comment(client: LanguageClient, workspace):
    directory = project(workspace, "addnoqa")
    text = CLEAN.replace("learning_rate=", "lr=")
    path = directory / "train.py"
    published = await open_document(client, path, text)
    assert [d.code for d in published] == ["PTR202"]
    actions = await code_actions(client, path.as_uri(), text, only=["quickfix"], line=2)
    noqa = next(a for a in actions if "noqa" in a.title)
    after = apply(text, (await edit_of(client, noqa)).changes[path.as_uri()])
    assert after == cli_fixed(directory, "cli.py", text, "--add-noqa")
    assert "# noqa: PTR202" in after
    assert await change_document(client, path, after, 2) == []


async def test_hover_shows_the_rule_documentation(client: LanguageClient, workspace):
    directory = project(workspace, "hover")
    text = CLEAN.replace("learning_rate=1e-4)", "lr=1e-4)  # noqa: PTR202, E501")
    path = directory / "train.py"
    await open_document(client, path, text)
    line = text.splitlines()[2]
    doc = cli("rule", "PTR202", cwd=directory).stdout
    assert "hf-lr" in doc
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(path.as_uri()),
                          types.Position(2, line.index("PTR202") + 2))
    )  # fmt: skip
    assert hover is not None and hover.contents.value == doc
    assert hover.range.start.character == line.index("PTR202")
    # Not ours: another linter's code in the same comment.
    other = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(path.as_uri()),
                          types.Position(2, line.index("E501") + 1))
    )  # fmt: skip
    assert other is None

    # Over a diagnostic's range: the doc of its rule.
    buggy = directory / "buggy.py"
    published = await open_document(client, buggy, BUGGY)
    lr = next(d for d in published if d.code == "PTR202")
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(buggy.as_uri()), lr.range.start)
    )
    assert hover is not None and doc in hover.contents.value


async def test_a_config_change_relints_open_documents(client: LanguageClient, workspace):
    directory = project(workspace, "config", '[tool.trio-lint]\nignore = ["PTR202"]\n')
    path = directory / "train.py"
    text = CLEAN.replace("learning_rate=", "lr=")
    assert await open_document(client, path, text) == []
    assert any(
        watcher["globPattern"] == "**/pyproject.toml"
        for registration in client.registrations
        if registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
        for watcher in registration.register_options["watchers"]
    )

    # The client reports the changed file (workspace/didChangeWatchedFiles).
    pyproject = directory / "pyproject.toml"
    pyproject.write_text("[project]\nname = 'config'\n[tool.trio-lint]\nignore = []\n")
    since = len(client.published)
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            [types.FileEvent(pyproject.as_uri(), types.FileChangeType.Changed)]
        )
    )
    assert [d.code for d in await diagnostics(client, path.as_uri(), since)] == ["PTR202"]

    # Saving pyproject.toml in the editor re-lints too.
    pyproject.write_text("[project]\nname = 'config'\n[tool.trio-lint]\nselect = ['PTR1']\n")
    since = len(client.published)
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(pyproject.as_uri()))
    )
    assert await diagnostics(client, path.as_uri(), since) == []


async def test_config_is_found_as_the_cli_finds_it(client: LanguageClient, workspace):
    table = (
        '[tool.trio-lint]\ntarget-version = "0.1"\nextend-exclude = ["generated/"]\n'
        '[tool.trio-lint.per-file-ignores]\n"scripts/*" = ["PTR202"]\n'
    )
    directory = project(workspace, "discovery", table)
    for sub in ("generated", "scripts", "pkg"):
        (directory / sub).mkdir()
    text = CLEAN.replace("learning_rate=", "lr=") + "trio.configure(api_key='k')\n"
    for name in ("pkg/a.py", "scripts/b.py", "generated/c.py"):
        published = await open_document(client, directory / name, text)
        cli_name = name.replace(".py", "_cli.py")
        assert found(published) == cli_findings(directory, cli_name, text, "--force-exclude"), name
    assert {d.code for d in await open_document(client, directory / "pkg/d.py", text)} == {
        "PTR007", "PTR202"
    }  # fmt: skip


async def test_an_invalid_config_is_shown_not_linted(client: LanguageClient, workspace):
    directory = project(workspace, "invalid", '[tool.trio-lint]\nselectt = ["PTR1"]\n')
    published = await open_document(client, directory / "train.py", BUGGY)
    assert published == []
    message = await wait_for(lambda: [m for m in client.messages if "selectt" in m.message])
    assert message[0].type == types.MessageType.Error
    assert "select" in message[0].message  # the CLI's "did you mean" hint
    assert cli("train.py", cwd=directory).returncode == 2  # the CLI refuses as well


async def test_positions_count_utf16_units(client: LanguageClient, workspace):
    directory = project(workspace, "utf16")
    text = 'import pytrio as trio\n\nadam = ("🙂", trio.AdamParams(lr=1e-4))\n'
    published = await open_document(client, directory / "train.py", text)
    (lr,) = published
    line = text.splitlines()[2]
    # One character before `lr` is outside the BMP: two UTF-16 units.
    assert lr.range.start.character == line.index("lr=") + 1


def notebook_json(cells: list[tuple[str, str]]) -> str:
    return json.dumps(
        {
            "cells": [
                {"cell_type": kind, "metadata": {}, "source": text,
                 **({"outputs": [], "execution_count": None} if kind == "code" else {})}
                for kind, text in cells
            ],
            "metadata": {"language_info": {"name": "python"}},
            "nbformat": 4,
            "nbformat_minor": 5,
        },
        indent=1,
    )  # fmt: skip


async def test_notebook_cells(client: LanguageClient, workspace):
    directory = project(workspace, "notebook")
    cells = [
        ("code", "import pytrio as trio"),
        ("markdown", "# Training"),
        ("code", "adam = trio.AdamParams(lr=1e-4)\nparams = trio.SamplingParams(max_new_tokens=8)"),
    ]
    notebook = directory / "train.ipynb"
    uris = [f"{notebook.as_uri()}#cell{n}" for n in range(len(cells))]
    since = len(client.published)
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=notebook.as_uri(),
                notebook_type="jupyter-notebook",
                version=1,
                cells=[
                    types.NotebookCell(
                        kind=types.NotebookCellKind.Code if kind == "code"
                        else types.NotebookCellKind.Markup,
                        document=uri,
                    )
                    for (kind, _), uri in zip(cells, uris, strict=True)
                ],
            ),
            cell_text_documents=[
                types.TextDocumentItem(uri=uri, language_id="python" if kind == "code"
                                       else "markdown", version=1, text=text)
                for (kind, text), uri in zip(cells, uris, strict=True)
            ],
        )
    )  # fmt: skip
    published = await diagnostics(client, uris[2], since)
    first, second = cells[2][1].splitlines()
    start, end = second.index("max_new_tokens"), len(second) - 1
    assert found(published) == [
        ("PTR201", 1, start, 1, end),
        ("PTR202", 0, first.index("lr="), 0, first.index("lr=") + len("lr=1e-4")),
    ]
    assert await diagnostics(client, uris[0], since) == []

    # Fix all: the cells become what `trio-lint --fix` writes into the .ipynb file.
    cli_notebook = directory / "cli.ipynb"
    cli_notebook.write_text(notebook_json(cells))
    assert cli("--no-cache", "--fix", "cli.ipynb", cwd=directory).returncode in (0, 1)
    expected = ["".join(c["source"]) for c in json.loads(cli_notebook.read_text())["cells"]]
    actions = await code_actions(client, uris[2], cells[2][1], only=["source.fixAll"])
    edit = await edit_of(client, actions[0])
    assert set(edit.changes) == {uris[2]}
    assert apply(cells[2][1], edit.changes[uris[2]]) == expected[2]

    # A quick fix in a cell edits that cell.
    actions = await code_actions(client, uris[2], cells[2][1], only=["quickfix"], line=0)
    fix = next(a for a in actions if "noqa" not in a.title)
    edit = await edit_of(client, fix)
    assert apply(cells[2][1], edit.changes[uris[2]]).startswith(
        "adam = trio.AdamParams(learning_rate=1e-4)\n"
    )

    # Editing the cell re-lints the notebook: the fixed cell has no findings left.
    since = len(client.published)
    client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(
                version=2, uri=notebook.as_uri()
            ),
            change=types.NotebookDocumentChangeEvent(
                cells=types.NotebookDocumentCellChanges(
                    text_content=[
                        types.NotebookDocumentCellContentChanges(
                            document=types.VersionedTextDocumentIdentifier(uri=uris[2], version=2),
                            changes=[types.TextDocumentContentChangeWholeDocument(expected[2])],
                        )
                    ]
                )
            ),
        )
    )
    assert await diagnostics(client, uris[2], since) == []


async def test_a_burst_of_changes_is_linted_once_for_the_newest_text(
    client: LanguageClient, workspace
):
    directory = project(workspace, "debounce")
    path = directory / "train.py"
    await open_document(client, path, CLEAN)
    since = len(client.published)
    # The first text is long, so its lint outlasts the arrival of the seven short texts after it
    # however fast the linter and however loaded the machine (a burst of equally long texts
    # raced the client's writes against the server's lints): they arrive while that lint runs,
    # which is what is coalesced.
    padding = "".join(f"value_{i} = [{i}, {i} + 1]\n" for i in range(20000))
    texts = [CLEAN + padding + "adam = trio.AdamParams(lr=1e-4)\n"]
    texts += [CLEAN + "adam = trio.AdamParams(lr=1e-4)\n" * n for n in range(2, 9)]
    for version, text in enumerate(texts, start=2):
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=path.as_uri(), version=version
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
    final = await diagnostics(client, path.as_uri(), since, version=len(texts) + 1)
    assert [d.code for d in final] == ["PTR202"] * len(texts)
    lints = [p for p in client.published[since:] if p.uri == path.as_uri()]
    assert len(lints) < len(texts)  # coalesced, and the last one is the newest text
    assert lints[-1].version == len(texts) + 1


async def test_a_request_right_after_an_edit_sees_that_edit(client: LanguageClient, workspace):
    directory = project(workspace, "settled")
    path = directory / "train.py"
    await open_document(client, path, CLEAN)
    text = CLEAN.replace("learning_rate=", "lr=")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=path.as_uri(), version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
    actions = await code_actions(client, path.as_uri(), text, only=["quickfix"])  # no wait
    assert any("learning_rate" in a.title for a in actions)


async def test_an_untitled_python_buffer_is_linted(client: LanguageClient):
    uri = "untitled:Untitled-1"
    since = len(client.published)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="python", version=1, text=BUGGY)
        )
    )
    assert {"PTR201", "PTR202"} <= {d.code for d in await diagnostics(client, uri, since, 1)}


async def test_sdk_modules_come_from_the_config(client: LanguageClient, workspace):
    text = "import tinker\n\nadam = tinker.AdamParams(lr=1e-4)\n"
    plain = project(workspace, "sdk_default")
    assert await open_document(client, plain / "a.py", text) == []  # not an SDK module here
    tinker = project(workspace, "sdk_tinker", '[tool.trio-lint]\nsdk-modules = ["tinker"]\n')
    published = await open_document(client, tinker / "a.py", text)
    assert [d.code for d in published] == ["PTR202"]
    assert found(published) == cli_findings(tinker, "cli.py", text)
