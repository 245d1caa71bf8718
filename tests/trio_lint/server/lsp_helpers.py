"""Drive `trio-lint server` (the console script, over stdio) with pytest-lsp's client, and run
the trio-lint console script to compare with what the command line does."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

# Markers that make tests/trio_lint/server/faulty_server.py's trio-lint fail on a document.
ENGINE_FAULT = "inject-engine-fault"
RULE_FAULT = "inject-rule-fault"

BIN = Path(sys.executable).parent
TRIO_LINT = str(BIN / "trio-lint")
HERE = Path(__file__).resolve().parent

# Safe fixes (PTR001, PTR202, PTR203, PTR201), an unsafe one (PTR102) and a finding without a
# fix (PTR207, the LoRA rank).
BUGGY = """\
import pytrio as trio
from pytrio import SamplingParams

service = trio.ServiceClient()
training = service.create_lora_training_client(
    base_model="Qwen/Qwen3-4B-Instruct-2507", rank=4096
)
adam = trio.AdamParams(lr=1e-4, betas=(0.9, 0.95))
params = SamplingParams(max_new_tokens=32)
training.optim_step(adam)
"""

CLEAN = """\
import pytrio as trio

adam = trio.AdamParams(learning_rate=1e-4)
"""


def make_client() -> LanguageClient:
    """pytest-lsp's client, recording every publishDiagnostics (with its version) and every
    capability the server registers."""
    client = LanguageClient(converter_factory=default_converter)
    register_lsp_features(
        client,
        {
            method: handler
            for method, handler in DEFAULT_CLIENT_FEATURES.items()
            if method != types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS
        },
    )
    client.published = []  # type: ignore[attr-defined]
    client.registrations = []  # type: ignore[attr-defined]

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def published(params: types.PublishDiagnosticsParams) -> None:
        client.diagnostics[params.uri] = params.diagnostics
        client.published.append(params)  # type: ignore[attr-defined]

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        client.registrations.extend(params.registrations)  # type: ignore[attr-defined]

    return client


def capabilities(name: str = "visual-studio-code", *, notebooks: bool = True):
    found = client_capabilities(name)
    if notebooks:
        found.notebook_document = types.NotebookDocumentClientCapabilities(
            synchronization=types.NotebookDocumentSyncClientCapabilities()
        )
    return found


async def start_session(client: LanguageClient, root: Path, caps: Any) -> None:
    await client.initialize_session(
        types.InitializeParams(
            capabilities=caps,
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
        )
    )


async def wait_for(predicate, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError("the server did not answer in time")
        await asyncio.sleep(0.01)


async def diagnostics(
    client: LanguageClient, uri: str, since: int, version: int | None = None
) -> list[types.Diagnostic]:
    """The first diagnostics published for `uri` (and `version`) after `since` publishes."""

    def found():
        for params in client.published[since:]:  # type: ignore[attr-defined]
            if params.uri == uri and (version is None or params.version == version):
                return [params]
        return None

    return list((await wait_for(found))[0].diagnostics)


async def open_document(
    client: LanguageClient, path: Path, text: str, language: str = "python"
) -> list[types.Diagnostic]:
    since = len(client.published)  # type: ignore[attr-defined]
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=path.as_uri(), language_id=language, version=1, text=text)
        )
    )
    return await diagnostics(client, path.as_uri(), since, 1)


async def change_document(
    client: LanguageClient, path: Path, text: str, version: int
) -> list[types.Diagnostic]:
    since = len(client.published)  # type: ignore[attr-defined]
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=path.as_uri(), version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
    return await diagnostics(client, path.as_uri(), since, version)


def close_document(client: LanguageClient, path: Path) -> None:
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(path.as_uri()))
    )


async def code_actions(
    client: LanguageClient, uri: str, text: str, only: list[str] | None = None, line: int = -1
) -> list[types.CodeAction]:
    """Actions for one 0-based line, or for the whole document (line=-1)."""
    last = len(text.splitlines())
    span = (
        types.Range(types.Position(0, 0), types.Position(last, 0))
        if line < 0
        else types.Range(types.Position(line, 0), types.Position(line, 0))
    )
    found = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri),
            range=span,
            context=types.CodeActionContext(diagnostics=[], only=only),
        )
    )
    return [action for action in found or [] if isinstance(action, types.CodeAction)]


async def edit_of(client: LanguageClient, action: types.CodeAction) -> types.WorkspaceEdit:
    if action.edit is None:
        action = await client.code_action_resolve_async(action)
    assert action.edit is not None, f"no edit for {action.title}"
    return action.edit


def _offset(text: str, position: types.Position) -> int:
    """An LSP position (UTF-16 columns) as an index into `text` (lines end with \\n here)."""
    lines = text.split("\n")
    offset = sum(len(line) + 1 for line in lines[: position.line])
    if position.line >= len(lines):
        return len(text)
    units = 0
    for index, char in enumerate(lines[position.line]):
        if units >= position.character:
            return offset + index
        units += 2 if ord(char) > 0xFFFF else 1
    return offset + len(lines[position.line])


def apply(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP text edits (non-overlapping, as the protocol requires) to `text`."""
    spans = sorted(
        ((_offset(text, e.range.start), _offset(text, e.range.end), e.new_text) for e in edits),
        reverse=True,
    )
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def cli(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [TRIO_LINT, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def cli_fixed(directory: Path, name: str, text: str, *options: str) -> str:
    """What `trio-lint <options> name` leaves in the file (e.g. --fix, --add-noqa)."""
    path = directory / name
    path.write_text(text)
    result = cli("--no-cache", *options, name, cwd=directory)
    assert result.returncode in (0, 1), result.stderr
    return path.read_text()
