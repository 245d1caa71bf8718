"""`trio-lint server` answers every request and never goes deaf: malformed frames are logged and
the stream resynchronises at the next header; a Content-Length over the cap allocates nothing;
params of the wrong shape (fuzzed with hypothesis) get InvalidParams; the lifecycle follows LSP
3.17 (ServerNotInitialized before `initialize`, a second `initialize` refused with the open
documents kept, InvalidRequest after `shutdown`, `exit` codes 0 after shutdown and 1 without).

The frame parser is tested on its own (property: any junk before a frame costs no later frame);
the rest runs against the console script over real pipes, through a raw client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.trio_lint.server.lsp_helpers import BUGGY
from tests.trio_lint.server.raw_client import RawClient, frame
from trio_lint.server.transport import MAX_BODY_BYTES, Fault, FrameParser

INVALID_REQUEST, INVALID_PARAMS, SERVER_NOT_INITIALIZED = -32600, -32602, -32002

# --- the frame parser ------------------------------------------------------------------------

BODIES = st.lists(
    st.dictionaries(st.text(max_size=5), st.text(max_size=20), max_size=3), min_size=1, max_size=4
)
JUNK = st.binary(max_size=200).filter(lambda b: b"content-length" not in b.lower())


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    bodies=BODIES, junk=st.lists(JUNK, min_size=1, max_size=4), cuts=st.lists(st.integers(0, 400))
)
def test_junk_before_frames_never_costs_a_later_frame(bodies, junk, cuts):
    import json

    frames = [frame(body) for body in bodies]
    stream = b"".join(j + f for j, f in zip(junk, frames, strict=False)) + b"".join(
        frames[len(junk) :]
    )
    parser = FrameParser()
    items = []
    start = 0
    for cut in sorted(set(cuts)):  # arbitrary chunking of the byte stream
        items += parser.items(stream[start:cut])
        start = max(start, cut)
    items += parser.items(stream[start:])
    decoded = [json.loads(item) for item in items if isinstance(item, bytes) and item]
    assert decoded[-len(bodies) :] == bodies, (stream, items)


@pytest.mark.parametrize(
    "junk",
    [b"Content-Length: abc\r\n\r\n{}", b"Content-Length: -5\r\n\r\n{}", b"no header at all",
     b"\x00\xff\xfe random", b"Content-Length: 500\r\n\r\n{}", b"X: y\r\n\r\n",
     b"Content-Length: 1e3\r\n\r\n", b"Content-Length:\r\n\r\n", b"\r\n\r\n\r\n"],
    ids=["abc", "negative", "no-header", "random", "too-long", "no-length", "float", "empty",
         "blank-lines"],
)  # fmt: skip
def test_a_malformed_frame_is_a_fault_and_the_next_frame_is_read(junk):
    parser = FrameParser()
    items = parser.items(junk + frame({"ok": 1}))
    assert any(isinstance(item, Fault) for item in items), items
    assert items[-1] == b'{"ok": 1}', items


def test_a_length_over_the_cap_is_refused_before_any_body_arrives():
    parser = FrameParser(max_body=1000)
    items = parser.items(b"Content-Length: 99999999999\r\n\r\n")
    assert len(items) == 1 and isinstance(items[0], Fault) and "over" in items[0].reason
    assert MAX_BODY_BYTES < 99999999999
    # The bytes that follow are scanned as junk, in bounded memory, up to the next header.
    for _ in range(50):
        parser.items(b"x" * 65536)
    assert parser.items(frame({"ok": 2}))[-1] == b'{"ok": 2}'


# --- the server ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("transport")
    (directory / "pyproject.toml").write_text("[project]\nname = 'transport'\n")
    return directory


@pytest.fixture(scope="module")
def server(workspace: Path):
    client = RawClient(workspace)
    client.initialize(workspace)
    yield client
    client.close()


def hover(client: RawClient, uri: str = "file:///nowhere.py") -> dict:
    return client.request(
        "textDocument/hover",
        {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}},
    )


FRAME_FAULTS = {
    "abc": b"Content-Length: abc\r\n\r\n{}",
    "negative": b"Content-Length: -5\r\n\r\n{}",
    "random": b"random \x00\xff bytes",
    "no-header": b'{"jsonrpc": "2.0", "id": 1}',
    "huge": b"Content-Length: 99999999999\r\n\r\n",
    "short-body": b"Content-Length: 300\r\n\r\n{}",
}
NOT_JSON_RPC = {
    "not-json": b"Content-Length: 2\r\n\r\n{]",
    "empty": b"Content-Length: 0\r\n\r\n",
    "array": frame([1, 2]),
    "jsonrpc-1": frame({"jsonrpc": "1.0", "id": 5}),
    "bad-id": frame({"jsonrpc": "2.0", "id": {"a": 1}, "method": "x"}),
}


@pytest.mark.parametrize("name", [*FRAME_FAULTS, *NOT_JSON_RPC])
def test_after_a_malformed_frame_the_server_still_answers(server: RawClient, name: str):
    server.send(FRAME_FAULTS.get(name) or NOT_JSON_RPC[name])
    assert hover(server)["result"] is None
    assert server.process.poll() is None  # alive, and listening
    if name in FRAME_FAULTS:  # the fault is logged to the client
        logged = server.wait(
            lambda m: (
                m.get("method") == "window/logMessage"
                and "malformed message frame" in m["params"]["message"]
            ),
            timeout=5,
        )
        assert logged is not None, name
    else:  # answered as JSON-RPC 2.0 says: an error response without an id
        answer = server.wait(lambda m: "error" in m and m.get("id") is None, timeout=5)
        assert answer is not None and answer["error"]["code"] in (-32700, INVALID_REQUEST)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
POSITION = st.fixed_dictionaries({"line": JSON | st.integers(0, 3), "character": JSON})
DOCUMENT = st.fixed_dictionaries({"uri": JSON | st.just("file:///x.py")})


def _methods() -> tuple[list[str], list[str]]:
    """The server's own requests and notifications (what it registers, builtin or ours), less
    the ones that end or restart the session."""
    from lsprotocol import types

    from trio_lint.server.app import build

    features = build().protocol.fm
    names = set(features.features) | set(features.builtin_features)
    names -= {"initialize", "shutdown", "exit"}
    requests = sorted(n for n in names if types.METHOD_TO_TYPES.get(n, (None, None))[1])
    return requests, sorted(names - set(requests))


REQUESTS, NOTIFICATIONS = _methods()
PARAMS = JSON | st.fixed_dictionaries(
    {}, optional={"textDocument": JSON | DOCUMENT, "position": JSON | POSITION, "range": JSON,
                  "context": JSON, "title": JSON, "data": JSON}
)  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    method=st.sampled_from(REQUESTS),
    notification=st.sampled_from(NOTIFICATIONS),
    params=PARAMS,
)
def test_every_request_gets_a_response_whatever_its_params(
    server: RawClient, method, notification, params
):
    assert {"textDocument/hover", "textDocument/codeAction", "codeAction/resolve"} <= set(REQUESTS)
    response = server.request(method, params)
    if "error" in response:
        assert response["error"]["code"] == INVALID_PARAMS, response
        assert method in response["error"]["message"]
    # A notification with the same params is dropped or handled, never fatal: the next
    # request is answered.
    server.notify(notification, params)
    assert hover(server)["result"] is None


ORIGIN = {"line": 0, "character": 0}
WRONG_TYPES = {
    "hover-document-int": ("textDocument/hover", {"textDocument": 5, "position": ORIGIN}),
    "hover-position-str": ("textDocument/hover", {"textDocument": {"uri": "file:///x.py"},
                                                  "position": "x"}),
    "hover-params-list": ("textDocument/hover", [1, 2]),
    "action-document-int": ("textDocument/codeAction", {"textDocument": 5, "range": 5,
                                                        "context": {}}),
}  # fmt: skip


@pytest.mark.parametrize("name", WRONG_TYPES)
def test_params_of_the_wrong_type_are_invalid_params(server: RawClient, name: str):
    # Named cases of what the property test below draws at random: each is answered, not dropped.
    method, params = WRONG_TYPES[name]
    response = server.request(method, params, timeout=10)
    assert response["error"]["code"] == INVALID_PARAMS, response
    assert method in response["error"]["message"]
    assert hover(server)["result"] is None


@pytest.fixture
def opened(workspace: Path):
    """A fresh server, initialized, with one document open and its diagnostics published."""
    client = RawClient(workspace)
    try:
        client.initialize(workspace)
        uri = (workspace / "open.py").as_uri()
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": BUGGY}},
        )
        published = client.wait(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
            )
        )
        assert published is not None and published["params"]["diagnostics"]
        yield client, uri
    finally:
        client.close()


def test_a_request_before_initialize_is_server_not_initialized(workspace: Path):
    client = RawClient(workspace)
    try:
        early = hover(client)
        assert early["error"]["code"] == SERVER_NOT_INITIALIZED, early
    finally:
        client.close()


def test_a_second_initialize_is_refused_and_keeps_the_open_documents(opened):
    client, uri = opened
    again = client.request("initialize", {"processId": None, "capabilities": {}}, timeout=10)
    # The open document survived the second initialize: its code actions are still there
    # (checked first: an accepted second initialize replaced the workspace and lost them).
    actions = client.request(
        "textDocument/codeAction",
        {"textDocument": {"uri": uri},
         "range": {"start": {"line": 0, "character": 0}, "end": {"line": 10, "character": 0}},
         "context": {"diagnostics": []}},
        timeout=10,
    )  # fmt: skip
    assert actions.get("result"), actions
    assert again.get("error", {}).get("code") == INVALID_REQUEST, again


def test_a_request_after_shutdown_is_invalid_request_and_exit_is_0(opened):
    client, uri = opened
    assert client.request("shutdown")["result"] is None
    late = client.request(
        "textDocument/hover",
        {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}},
        timeout=10,
    )
    assert late["error"]["code"] == INVALID_REQUEST, late
    client.notify("exit")
    assert client.process.wait(timeout=20) == 0


def test_exit_without_shutdown_is_exit_code_1(workspace: Path):
    client = RawClient(workspace)
    try:
        client.initialize(workspace)
        client.notify("exit")
        assert client.process.wait(timeout=20) == 1
    finally:
        client.close()


def test_documents_under_a_symlink_loop_are_served(server: RawClient, workspace: Path):
    # Path.resolve raises RuntimeError on a loop; the config lookup and the watch must not.
    loop = workspace / "loop"
    if not loop.is_symlink():
        loop.symlink_to("loop")
    uri = (loop / "x.py").as_uri()
    server.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": BUGGY}},
    )
    published = server.wait(
        lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
    )
    assert published is not None and published["params"]["diagnostics"]
    server.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    assert hover(server, uri) is not None
    shown = [m for m in server.received if m.get("method") == "window/showMessage"]
    assert shown == [], shown


def _published(client: RawClient, uri: str, version: int) -> list[tuple]:
    found = client.wait(
        lambda m: (
            m.get("method") == "textDocument/publishDiagnostics"
            and m["params"]["uri"] == uri
            and m["params"].get("version") == version
        )
    )
    assert found is not None, f"no diagnostics for {uri} version {version}"
    return sorted((d["code"], json.dumps(d["range"])) for d in found["params"]["diagnostics"])


def _span(line: int, character: int, end_line: int, end_character: int) -> dict:
    return {"start": {"line": line, "character": character},
            "end": {"line": end_line, "character": end_character}}  # fmt: skip


MALFORMED_CHANGES = {
    "text-null": ({"text": None}, "`text` must be a string, got null"),
    "text-number": ({"text": 5}, "`text` must be a string, got int"),
    "partial-text-null": ({"range": _span(0, 0, 0, 0), "text": None}, "got null"),
    "range-null": ({"range": None, "text": "x"}, "`range` must be a range, got null"),
    "character-fraction": ({"range": _span(0, 0.5, 0, 1), "text": "x"}, "range.start.character"),
    "range-backwards": ({"range": _span(3, 0, 1, 0), "text": "x"}, "ends before it starts"),
}


def test_malformed_content_changes_are_refused_and_keep_the_document(
    server: RawClient, workspace: Path
):
    # pygls turned `"text": null` into the text "None": the server's copy was lost. Each
    # malformed change is refused (logged, naming the field); the next valid change applies to
    # the text as it was, and lints as that text opened afresh.
    server.received.clear()  # what earlier tests left unread (their own log messages)
    uri = (workspace / "changed.py").as_uri()
    document = {"uri": uri, "languageId": "python", "version": 1, "text": BUGGY}
    server.notify("textDocument/didOpen", {"textDocument": document})
    assert _published(server, uri, 1)
    for version, (change, reason) in enumerate(MALFORMED_CHANGES.values(), start=2):
        server.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]},
        )
        logged = server.wait(
            lambda m: (
                m.get("method") == "window/logMessage" and "didChange" in m["params"]["message"]
            )
        )
        assert logged is not None and reason in logged["params"]["message"], (change, logged)
    insert = {"range": _span(0, 0, 0, 0), "text": "# edited\n"}
    server.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": 99}, "contentChanges": [insert]},
    )
    fresh = (workspace / "fresh.py").as_uri()
    document = {"uri": fresh, "languageId": "python", "version": 1, "text": "# edited\n" + BUGGY}
    server.notify("textDocument/didOpen", {"textDocument": document})
    assert _published(server, uri, 99) == _published(server, fresh, 1) != []
    # A document opened with a null text is refused too (it was opened as the text "None").
    document = {"uri": uri + "x", "languageId": "python", "version": 1, "text": None}
    server.notify("textDocument/didOpen", {"textDocument": document})
    logged = server.wait(
        lambda m: m.get("method") == "window/logMessage" and "didOpen" in m["params"]["message"]
    )
    assert logged is not None and "`text` must be a string, got null" in logged["params"]["message"]
