"""The language server: document sync, debounced linting, and the LSP features wired to the
modules that implement them (diagnostics, code_actions, hover, config_watch). Each feature is a
method of `TrioLintServer` (`on_...`), registered from the `_FEATURES` table.

Linting runs on a worker thread, so the event loop keeps reading messages; each document is
linted by one task at a time, and changes that arrive meanwhile are coalesced into one more lint
of the newest text (the debounce, see `_lint_loop`)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from trio_lint.output.diagnostics import Diagnostic
from trio_lint.output.version import __version__
from trio_lint.server import code_actions, hover, pygls_adapter
from trio_lint.server.config_watch import ConfigWatch, Settings
from trio_lint.server.diagnostics import LintOutcome, by_document, lint, overlaps
from trio_lint.server.documents import (
    Target,
    from_position,
    is_python,
    notebook_target,
    python_target,
    split_lines,
    to_range,
)

DEFAULT_DEBOUNCE = 0.01  # seconds: gathers the rest of a burst of didChange messages


@dataclass
class DocumentState:
    """The last lint of a target: reused by hover and code actions, and to skip re-linting a
    save or an open whose text and settings have not changed."""

    target: Target
    settings: Settings
    diagnostics: list[Diagnostic] = field(default_factory=list)
    excluded: bool = False


class TrioLintServer(LanguageServer):
    def __init__(self, config: Path | None = None, debounce: float = DEFAULT_DEBOUNCE) -> None:
        super().__init__(
            "trio-lint",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                notebook_selector=[
                    types.NotebookDocumentFilterWithCells(
                        notebook="*", cells=[types.NotebookCellLanguage(language="python")]
                    )
                ],
                save=True,
            ),
            converter_factory=pygls_adapter.converter,
        )
        self.watch = ConfigWatch(config)
        self.debounce = debounce
        self.states: dict[str, DocumentState] = {}
        self.lint_pool = ThreadPoolExecutor(1, thread_name_prefix="trio-lint-lint")
        self.fix_pool = ThreadPoolExecutor(1, thread_name_prefix="trio-lint-fix")
        self._pending: set[str] = set()
        self._tasks: dict[str, asyncio.Task] = {}
        self._shown_errors: set[str] = set()
        self._register_features()

    # --- logging --------------------------------------------------------------------------------

    def log(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    def show_error(self, message: str) -> None:
        self.log(message, types.MessageType.Error)
        if message not in self._shown_errors:  # once per distinct error, not per keystroke
            self._shown_errors.add(message)
            self.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Error, message=message)
            )

    # --- targets --------------------------------------------------------------------------------

    @property
    def encoding(self) -> str:
        return str(self.workspace.position_encoding or types.PositionEncodingKind.Utf16)

    def key_of(self, uri: str) -> str:
        """The target a document belongs to: its notebook's URI for a cell, else its own."""
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        return notebook.uri if notebook is not None else uri

    def target_of(self, key: str) -> Target | None:
        notebook = self.workspace.get_notebook_document(notebook_uri=key)
        if notebook is not None:
            cells = []
            for cell in notebook.cells:
                document = self.workspace.text_documents.get(cell.document)
                text = document.source if document is not None else ""
                cells.append((cell.document, cell.kind == types.NotebookCellKind.Code, text))
            return notebook_target(key, _path(key), notebook.version, cells)
        document = self.workspace.text_documents.get(key)
        if document is None:
            return None
        path = _path(key)
        if not is_python(path, document.language_id):
            return None
        if not path.endswith((".py", ".pyi")):
            path += ".py"  # an untitled Python buffer: the suffix tells trio-lint the kind
        return python_target(key, path, document.source, document.version)

    def settings_of(self, path: str) -> Settings:
        file = Path(path)
        directory = file.parent if file.is_absolute() else Path.cwd()
        return self.watch.settings_for(directory, self.project_root(file))

    def project_root(self, file: Path) -> Path:
        """Where the CLI would run for this file when nothing configures trio-lint: the
        workspace folder that holds it, else the workspace root, else its directory."""
        for folder in self.workspace.folders.values():
            root = to_fs_path(folder.uri)
            if root and file.is_absolute() and file.is_relative_to(root):
                return Path(root)
        if self.workspace.root_path:
            return Path(self.workspace.root_path)
        return file.parent if file.is_absolute() else Path.cwd()

    # --- linting --------------------------------------------------------------------------------

    def schedule(self, key: str) -> None:
        self._pending.add(key)
        if key not in self._tasks:
            self._tasks[key] = asyncio.get_running_loop().create_task(self._lint_loop(key))

    async def _lint_loop(self, key: str) -> None:
        """Lint at once after a quiet spell (the messages already read come along); changes
        that arrive while a lint runs are gathered for `debounce` more seconds into one lint
        of the newest text."""
        delay = 0.0
        try:
            while key in self._pending:
                await asyncio.sleep(delay)
                delay = self.debounce
                self._pending.discard(key)
                try:
                    await self.lint_now(key)
                except Exception:  # a server bug on one document must not stop the others
                    self.log(f"trio-lint: cannot lint {key}:\n{traceback.format_exc()}",
                             types.MessageType.Error)  # fmt: skip
        finally:
            self._tasks.pop(key, None)

    async def lint_now(self, key: str) -> None:
        target = self.target_of(key)
        if target is None:
            return
        try:
            settings = self.settings_of(target.path)
        except Exception as exc:  # e.g. an unreadable directory: keep serving the others
            self.show_error(f"trio-lint: cannot read the configuration: {exc}")
            return
        if settings.error is not None:
            self.show_error(f"trio-lint: {settings.error}")
        previous = self.states.get(key)
        if (
            previous is not None
            and previous.settings is settings
            and previous.target.source == target.source
        ):
            previous.target = target  # same text, maybe a new version number
            self._publish(previous)
            return
        excluded = self.watch.excluded(settings, target.path)
        if excluded:
            outcome = LintOutcome()
        else:
            loop = asyncio.get_running_loop()
            outcome = await loop.run_in_executor(self.lint_pool, lint, target, settings)
        if outcome.error is not None:
            self.log(f"trio-lint: internal error on {target.path}:\n{outcome.error}",
                     types.MessageType.Error)  # fmt: skip
        state = DocumentState(target, settings, outcome.diagnostics, excluded)
        current = self.target_of(key)
        if current is None:
            return  # closed meanwhile: its diagnostics were cleared on close
        self.states[key] = state
        self._publish(state)

    def _publish(self, state: DocumentState) -> None:
        for uri, items in by_document(state.target, state.diagnostics, self.encoding).items():
            version = state.target.version if state.target.cells is None else None
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=items, version=version)
            )

    def clear(self, uris: list[str]) -> None:
        for uri in uris:
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
            )

    def relint_all(self) -> None:
        self.watch.invalidate()
        self._shown_errors.clear()
        keys = {self.key_of(uri) for uri in self.workspace.text_documents}
        for key in keys:
            if self.target_of(key) is not None:
                self.schedule(key)

    # --- lookups for hover and code actions ------------------------------------------------------

    async def settled(self, uri: str, timeout: float = 5.0) -> None:
        """Wait for a lint of the document's target that is under way (a request that comes
        right after an edit should see that edit's findings, not none)."""
        task = self._tasks.get(self.key_of(uri))
        if task is not None:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(task), timeout)

    def state_for(self, uri: str) -> tuple[DocumentState, int | None] | None:
        """The fresh state of the target holding `uri`, and the cell it is (None for a file)."""
        key = self.key_of(uri)
        state = self.states.get(key)
        target = self.target_of(key)
        if state is None or target is None or state.target.source != target.source:
            return None  # not linted yet, or edited since: diagnostics would point elsewhere
        return state, state.target.cell_of(uri) if state.target.cells is not None else None

    # --- the LSP features -----------------------------------------------------------------------

    def _register_features(self) -> None:
        for method, name, options in _FEATURES:
            # pygls marks each handler with attributes, which a bound method cannot carry (a
            # partial of it can), and passes the server only to functions that ask for it.
            self.feature(method, options)(functools.partial(getattr(self, name)))

    async def on_initialized(self, params: types.InitializedParams) -> None:
        loop = asyncio.get_running_loop()
        loop.run_in_executor(self.lint_pool, _warm_up_lint)
        loop.run_in_executor(self.fix_pool, _warm_up_fixes)
        if self.can_watch_files():
            try:
                await self.client_register_capability_async(self.watch.registration())
            except Exception as exc:  # the client said no: config edits apply on the next lint
                self.log(f"trio-lint: cannot watch configuration files: {exc}")

    def on_did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        self.schedule(self.key_of(params.text_document.uri))

    def on_did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        self.schedule(self.key_of(params.text_document.uri))

    def on_did_save(self, params: types.DidSaveTextDocumentParams) -> None:
        path = _path(params.text_document.uri)
        if self.watch.is_config_file(path):
            self.relint_all()
        else:
            self.schedule(self.key_of(params.text_document.uri))

    def on_did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        self.states.pop(params.text_document.uri, None)
        self.clear([params.text_document.uri])

    def on_notebook_open(self, params: types.DidOpenNotebookDocumentParams) -> None:
        self.schedule(params.notebook_document.uri)

    def on_notebook_change(self, params: types.DidChangeNotebookDocumentParams) -> None:
        structure = params.change.cells.structure if params.change.cells else None
        if structure is not None:
            self.clear([cell.uri for cell in structure.did_close or ()])
        self.schedule(params.notebook_document.uri)

    def on_notebook_save(self, params: types.DidSaveNotebookDocumentParams) -> None:
        self.schedule(params.notebook_document.uri)

    def on_notebook_close(self, params: types.DidCloseNotebookDocumentParams) -> None:
        self.states.pop(params.notebook_document.uri, None)
        self.clear([cell.uri for cell in params.cell_text_documents])

    def on_watched_files(self, params: types.DidChangeWatchedFilesParams) -> None:
        if any(self.watch.is_config_file(_path(change.uri)) for change in params.changes):
            self.relint_all()

    async def on_code_action(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        await self.settled(params.text_document.uri)
        found = self.state_for(params.text_document.uri)
        if found is None:
            return None
        state, cell = found
        located = state.target.text_of(cell)
        lines = split_lines(located[1] if located else "")
        first, _ = from_position(lines, params.range.start, self.encoding)
        last, _ = from_position(lines, params.range.end, self.encoding)
        mine = [d for d in state.diagnostics if d.cell == cell]
        in_range = [d for d in mine if overlaps(d, first + 1, last + 1)]
        offered = code_actions.offered(
            params.text_document.uri, state.target, state.diagnostics, in_range,
            params.context.only,
        )  # fmt: skip
        if not offered:
            return None
        lazy = self.resolve_supported()
        actions = []
        for kind, title, data, diagnostic in offered:
            action = types.CodeAction(
                title=title,
                kind=kind,
                data=data,
                diagnostics=[self._lsp_diagnostic(state, diagnostic)] if diagnostic else None,
                is_preferred=_preferred(data, diagnostic),
            )
            if not lazy:
                action.edit = await self._compute(state, data)
                if action.edit is None:
                    continue
            actions.append(action)
        return actions or None

    async def on_code_action_resolve(self, action: types.CodeAction) -> types.CodeAction:
        data = action.data if isinstance(action.data, dict) else {}
        found = self.state_for(data.get("uri", ""))
        if found is not None:
            action.edit = await self._compute(found[0], data)
        return action

    async def on_hover(self, params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        await self.settled(uri)
        key = self.key_of(uri)
        target = self.target_of(key)
        if target is None:
            return None
        located = target.text_of(target.cell_of(uri) if target.cells is not None else None)
        if located is None:
            return None
        lines = split_lines(located[1])
        line, character = from_position(lines, params.position, self.encoding)
        if line >= len(lines):
            return None
        found = hover.noqa_code_at(lines[line], character)
        if found is not None:
            code, start, end = found
            text = hover.hover_text([code])
            span = to_range(lines, (line + 1, start + 1), (line + 1, end + 1), self.encoding)
            return types.Hover(
                contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text or ""),
                range=span,
            )
        state = self.state_for(uri)
        if state is None:
            return None
        under = hover.diagnostics_at(state[0].diagnostics, state[1], line, character)
        text = hover.hover_text([d.code for d in under])
        if text is None:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))

    def on_shutdown(self, params: Any) -> None:
        self.lint_pool.shutdown(wait=False, cancel_futures=True)
        self.fix_pool.shutdown(wait=False, cancel_futures=True)

    # --- helpers of the features ----------------------------------------------------------------

    def _lsp_diagnostic(self, state: DocumentState, diagnostic: Diagnostic) -> types.Diagnostic:
        from trio_lint.server.diagnostics import to_lsp

        located = state.target.text_of(diagnostic.cell)
        return to_lsp(diagnostic, split_lines(located[1] if located else ""), self.encoding)

    async def _compute(
        self, state: DocumentState, data: dict[str, Any]
    ) -> types.WorkspaceEdit | None:
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(
                self.fix_pool,
                code_actions.compute, data, state.target, state.settings, self.encoding,
            )  # fmt: skip
        except Exception:  # an engine bug in a fix: no edit, the server keeps serving
            self.log(f"trio-lint: cannot compute the fix:\n{traceback.format_exc()}",
                     types.MessageType.Error)  # fmt: skip
            return None

    def can_watch_files(self) -> bool:
        workspace = self.client_capabilities.workspace
        watched = workspace.did_change_watched_files if workspace else None
        return bool(watched and watched.dynamic_registration)

    def resolve_supported(self) -> bool:
        document = self.client_capabilities.text_document
        action = document.code_action if document else None
        support = action.resolve_support if action else None
        return bool(support and "edit" in support.properties)


# (LSP method, TrioLintServer handler, options): what the server offers.
_FEATURES: tuple[tuple[str, str, Any], ...] = (
    (types.INITIALIZED, "on_initialized", None),
    (types.TEXT_DOCUMENT_DID_OPEN, "on_did_open", None),
    (types.TEXT_DOCUMENT_DID_CHANGE, "on_did_change", None),
    (types.TEXT_DOCUMENT_DID_SAVE, "on_did_save", types.SaveOptions(include_text=False)),
    (types.TEXT_DOCUMENT_DID_CLOSE, "on_did_close", None),
    (types.NOTEBOOK_DOCUMENT_DID_OPEN, "on_notebook_open", None),
    (types.NOTEBOOK_DOCUMENT_DID_CHANGE, "on_notebook_change", None),
    (types.NOTEBOOK_DOCUMENT_DID_SAVE, "on_notebook_save", None),
    (types.NOTEBOOK_DOCUMENT_DID_CLOSE, "on_notebook_close", None),
    (types.WORKSPACE_DID_CHANGE_WATCHED_FILES, "on_watched_files", None),
    (
        types.TEXT_DOCUMENT_CODE_ACTION,
        "on_code_action",
        types.CodeActionOptions(code_action_kinds=list(code_actions.KINDS), resolve_provider=True),
    ),
    (types.CODE_ACTION_RESOLVE, "on_code_action_resolve", None),
    (types.TEXT_DOCUMENT_HOVER, "on_hover", None),
    (types.SHUTDOWN, "on_shutdown", None),
)


def _path(uri: str) -> str:
    return to_fs_path(uri) or uri


def build(config: Path | None = None, debounce: float = DEFAULT_DEBOUNCE) -> TrioLintServer:
    return TrioLintServer(config, debounce)


def _preferred(data: dict[str, Any], diagnostic: Diagnostic | None) -> bool | None:
    if data["action"] != "fix" or diagnostic is None or diagnostic.fix is None:
        return None
    return diagnostic.fix.applicability.value == "safe"


def _warm_up_lint() -> None:
    """Import the rules before the first document arrives (once, not on its first lint), then
    take everything loaded so far out of the garbage collector's sight: with pygls, libcst and
    every rule module in memory, each full collection walked them all, and the lints it fell
    into took ~40% longer (1,000 lines: p95 ~105 ms against a median of ~63 ms; ~70 ms frozen)."""
    from trio_lint import lint_source

    with contextlib.suppress(Exception):  # the real lint reports whatever this would hit
        lint_source("import pytrio\n", "warm_up.py")
    gc.freeze()


def _warm_up_fixes() -> None:
    """Still useful: linting never imports libcst, so the first quick fix (or fix-all) would pay
    its import and first parse (~0.25-0.4 s) while the user waits; the fix pool pays it here,
    idle, right after start-up (its own thread: no lint waits on it but for the shared GIL)."""
    with contextlib.suppress(Exception):
        import libcst

        libcst.parse_module("x = 1\n")
    gc.freeze()
