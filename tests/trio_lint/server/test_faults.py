"""One bad document never takes the server down: faults injected into trio-lint's engine and into
one rule (faulty_server.py) give the document a PTR903 diagnostic, the traceback goes
to the client's log, and the server keeps serving. The client here has Neovim's capabilities
(UTF-8 positions) minus codeAction/resolve, so code actions carry their edits directly."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.trio_lint.server.lsp_helpers import (
    BUGGY,
    CLEAN,
    ENGINE_FAULT,
    HERE,
    RULE_FAULT,
    apply,
    capabilities,
    cli_fixed,
    code_actions,
    make_client,
    open_document,
    start_session,
    wait_for,
)

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("faults")
    (directory / "pyproject.toml").write_text("[project]\nname = 'faults'\n")
    return directory


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(
        server_command=[sys.executable, str(HERE / "faulty_server.py")],
        client_factory=make_client,
    ),
)
async def client(lsp_client: LanguageClient, workspace: Path):
    caps = capabilities("neovim", notebooks=False)
    assert caps.general.position_encodings[0] == "utf-8"  # Neovim's first choice
    caps.text_document.code_action.resolve_support = None  # as clients without resolve
    await start_session(lsp_client, workspace, caps)
    yield
    await lsp_client.shutdown_session()


async def test_an_engine_fault_is_ptr903_and_the_server_keeps_serving(
    client: LanguageClient, workspace: Path
):
    bad = workspace / "bad.py"
    published = await open_document(client, bad, f"# {ENGINE_FAULT}\n{BUGGY}")
    assert [d.code for d in published] == ["PTR903"]
    assert "injected engine fault" in published[0].message
    cause = "RuntimeError: injected engine fault"
    logged = await wait_for(lambda: [m for m in client.log_messages if cause in m.message])
    assert logged[0].type == types.MessageType.Error and "Traceback" in logged[0].message

    # The next document is linted as usual, and its actions still work.
    good = workspace / "good.py"
    published = await open_document(client, good, BUGGY)
    assert {"PTR201", "PTR202"} <= {d.code for d in published}
    actions = await code_actions(client, good.as_uri(), BUGGY, only=["source.fixAll"])
    assert actions and actions[0].edit is not None  # no resolve support: the edit comes along
    after = apply(BUGGY, actions[0].edit.changes[good.as_uri()])
    assert after == cli_fixed(workspace, "cli.py", BUGGY, "--fix")


async def test_a_rule_fault_is_ptr903_and_the_other_rules_still_report(
    client: LanguageClient, workspace: Path
):
    text = f"# {RULE_FAULT}\n" + BUGGY
    published = await open_document(client, workspace / "rule.py", text)
    codes = [d.code for d in published]
    assert "PTR903" in codes and "PTR202" not in codes
    assert {"PTR201", "PTR203"} <= set(codes)
    crash = next(d for d in published if d.code == "PTR903")
    assert "PTR202" in crash.message and "injected rule fault" in crash.message
    # Still serving: a clean document gets (empty) diagnostics.
    assert await open_document(client, workspace / "clean.py", CLEAN) == []
