"""The language server is never blocked, quiet, and tied to its client
(issue 25 items 3-5; docs/editors.md#never-blocked, #logs, #lifetime):
requests on a small plan are answered while a ~500-node plan is checked,
the newest version wins, ``$/cancelRequest`` is honoured, a refused request
is a ResponseError with nothing on standard error, the log goes to
``window/logMessage`` (``--log-file``/``--verbose`` for debugging), and the
server exits when the client process named in ``initialize`` dies.
Ordering and responses are asserted, never durations."""
from __future__ import annotations

import pytest

import asyncio
import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from loopc.lsp.settings import DEFAULT_DEBOUNCE_MS, MIN_ADAPTIVE_MS, Settings, parse_settings
from lsp_support import GOOD, MARKS, RawSession, client_fixture, diagnostics, new_uri, open_doc, pos_of

ROOT = Path(__file__).resolve().parent.parent
client = client_fixture()


def _big_plan() -> str:
    spec = importlib.util.spec_from_file_location("loopc_bench_generate_lsp", ROOT / "benchmarks" / "generate.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod.near_budget_plan()  # 508 nodes, 1,442 edges, 0.9 MiB


BIG = _big_plan()


def big_text(uri: str) -> str:
    """The big plan, unique per document (so no memo of an earlier check
    of the same text answers at once)."""
    return BIG + f"# {uri}\n"

BAD = GOOD.replace("to: {node: done}", "to: {node: dne}")


def _hover(client: LanguageClient, uri: str, text: str, needle: str, encoding: str) -> Any:
    return client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=pos_of(text, needle, encoding, delta=5)))


@MARKS[0]
@MARKS[1]
@pytest.mark.slow
async def test_small_plan_answered_while_a_big_plan_is_checked(client: LanguageClient) -> None:
    """A hover on a small, already checked plan is answered while the
    check of a 508-node plan is still running (its diagnostics not yet
    delivered); the big plan's diagnostics then arrive."""
    _, _, encoding, pull = client.profile  # type: ignore[attr-defined]
    small = new_uri("small")
    open_doc(client, small, GOOD)
    await diagnostics(client, small, pull)
    big = new_uri("big")
    open_doc(client, big, big_text(big))
    big_pull = asyncio.ensure_future(client.text_document_diagnostic_async(
        lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=big)))) if pull else None
    await asyncio.sleep(0.05)  # the big check has started
    h = await _hover(client, small, GOOD, "id: ask", encoding)
    assert h is not None and "send_message" in h.contents.value
    if pull:
        assert big_pull is not None and not big_pull.done()
        await asyncio.wait_for(big_pull, 120)
    else:
        assert big not in client.diagnostics
        await diagnostics(client, big, pull, timeout=120)


@MARKS[0]
@MARKS[1]
async def test_cancel_request_is_honoured(client: LanguageClient) -> None:
    """A request waiting for a check, cancelled with ``$/cancelRequest``,
    is answered -32800 RequestCancelled; the session goes on."""
    _, _, encoding, _ = client.profile  # type: ignore[attr-defined]
    big = new_uri("bigc")
    open_doc(client, big, big_text(big))
    msg_id = "cancel-me"
    fut = asyncio.ensure_future(client.protocol.send_request_async(lsp.TEXT_DOCUMENT_HOVER, lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=big), position=lsp.Position(line=0, character=0)),
        msg_id=msg_id))
    await asyncio.sleep(0.05)
    client.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id=msg_id))
    try:
        got = await asyncio.wait_for(fut, 120)
    except JsonRpcException as exc:
        assert exc.code == -32800
    else:
        raise AssertionError(f"answered {got!r}, not RequestCancelled")
    small = new_uri("after")
    open_doc(client, small, GOOD)
    assert await _hover(client, small, GOOD, "id: ask", encoding) is not None


def test_newest_version_wins_stale_results_dropped() -> None:
    """A push client opens the big plan and changes it at once: only the
    newest version's diagnostics are published (the check of version 1
    finishes after version 2 exists and is dropped)."""
    uri = "file:///work/project/stale.yaml"
    s = RawSession()
    try:
        s.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "capabilities": {}, "initializationOptions": {"debounce": 0}}})
        s.reply(1)
        s.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        edited = BIG.replace("\nnodes:\n", "\nbogus: 1\nnodes:\n", 1)
        assert edited != BIG
        s.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "yaml", "version": 1, "text": BIG}}})
        s.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": edited}]}})
        s.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                   and m["params"].get("version") == 2, timeout=180)
        s.send({"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand",
                "params": {"command": "loopc.debugInfo"}})
        s.reply(2)
        versions = [m["params"].get("version") for m in s.messages()
                    if m.get("method") == "textDocument/publishDiagnostics"]
        assert versions == [2]
    finally:
        assert s.close() == 0


def test_push_debounce_is_adaptive() -> None:
    """Unset, the debounce is half the document's last check time within
    [10, 150] ms (a small plan re-checks after 10 ms); a set ``debounce``
    is used as is."""
    s = parse_settings({})
    assert s.debounce_ms is None and s.to_json()["debounce"] == "adaptive"
    assert s.debounce_for(2.0) == MIN_ADAPTIVE_MS
    assert s.debounce_for(60.0) == 30.0
    assert s.debounce_for(1800.0) == DEFAULT_DEBOUNCE_MS
    assert s.debounce_for(None) == DEFAULT_DEBOUNCE_MS
    assert parse_settings({"debounce": 300}).debounce_for(2.0) == 300
    assert Settings(debounce_ms=0).debounce_for(500.0) == 0


# ---------------------------------------------------------------------------
# quiet by default
# ---------------------------------------------------------------------------

def _init(s: RawSession, caps: dict | None = None, **extra: Any) -> None:
    s.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "capabilities": caps or {"textDocument": {"diagnostic": {}}}, **extra}})
    s.reply(1)
    s.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})


def test_quiet_session_refused_rename_unknown_methods_and_cancels() -> None:
    """A refused rename is a ResponseError (-32803) with the reason; a
    cancel for a request already answered, an unknown request (-32601) and
    an unknown notification are taken silently: standard error stays empty
    for the whole session (pygls alone printed a traceback, "Cancel
    notification for unknown message id" and unknown-method lines)."""
    uri = "file:///work/project/quiet.yaml"
    s = RawSession()
    try:
        _init(s)
        s.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "yaml", "version": 1, "text": GOOD}}})
        p = pos_of(GOOD, "id: ask", "utf-16", delta=5)
        s.send({"jsonrpc": "2.0", "id": 2, "method": "textDocument/rename", "params": {
            "textDocument": {"uri": uri}, "position": {"line": p.line, "character": p.character},
            "newName": "not an id"}})
        r = s.reply(2)
        assert r["error"]["code"] == -32803 and r["error"]["message"]
        s.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 2}})
        s.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 424242}})
        s.send({"jsonrpc": "2.0", "id": 3, "method": "loopc/noSuchThing", "params": {}})
        assert s.reply(3)["error"]["code"] == -32601
        s.send({"jsonrpc": "2.0", "method": "loopc/noSuchNotification", "params": {}})
        s.send({"jsonrpc": "2.0", "method": "$/setTrace", "params": {"value": "off"}})
        s.send({"jsonrpc": "2.0", "id": 4, "method": "workspace/executeCommand",
                "params": {"command": "loopc.debugInfo"}})
        s.reply(4)
        assert not any(m.get("method") == "window/showMessage" for m in s.messages())
    finally:
        assert s.close() == 0
    assert s.stderr == b"", s.stderr.decode(errors="replace")


def test_log_goes_to_the_client_with_levels(tmp_path: Path) -> None:
    """A broken project configuration is reported once as a
    ``window/logMessage`` of type Warning, not on standard error."""
    (tmp_path / ".loopc.toml").write_text("disable = [\n", encoding="utf-8")
    (tmp_path / ".git").mkdir()
    uri = (tmp_path / "plan.yaml").as_uri()
    s = RawSession()
    try:
        _init(s)
        s.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "yaml", "version": 1, "text": GOOD}}})
        s.send({"jsonrpc": "2.0", "id": 2, "method": "textDocument/diagnostic",
                "params": {"textDocument": {"uri": uri}}})
        s.reply(2)
        m = s.wait_for(lambda m: m.get("method") == "window/logMessage")
        assert m["params"]["type"] == lsp.MessageType.Warning.value
        assert "configuration is ignored" in m["params"]["message"]
    finally:
        assert s.close() == 0
    assert s.stderr == b""


def test_log_file_and_verbose(tmp_path: Path) -> None:
    """``--log-file PATH`` receives what the client is spared (pygls's
    unknown-method warning); with ``--verbose`` also the debug records
    (every message pygls sends).  Standard error stays empty."""
    for verbose in (False, True):
        log = tmp_path / f"lsp-{verbose}.log"
        s = RawSession("--log-file", str(log), *(["--verbose"] if verbose else []))
        try:
            _init(s)
            s.send({"jsonrpc": "2.0", "method": "loopc/noSuchNotification", "params": {}})
            s.send({"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand",
                    "params": {"command": "loopc.debugInfo"}})
            s.reply(2)
        finally:
            assert s.close() == 0
        text = log.read_text(encoding="utf-8")
        assert "loopc/noSuchNotification" in text and "WARNING" in text
        assert ("DEBUG" in text) is verbose
        assert s.stderr == b""


# ---------------------------------------------------------------------------
# lifetime
# ---------------------------------------------------------------------------

def test_exits_when_the_client_process_dies() -> None:
    """``initialize.processId`` names a process that then dies (the pipes
    stay open, as when an editor crashes and something else holds them):
    the server exits on its own, status 1, nothing on standard error."""
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    s = RawSession()
    try:
        _init(s, {}, processId=sleeper.pid)
        s.send({"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand",
                "params": {"command": "loopc.debugInfo"}})
        s.reply(2)
        assert s.proc.poll() is None  # alive while the client is
        sleeper.kill()
        sleeper.wait()
        assert s.proc.wait(60) == 1
    finally:
        sleeper.kill()
        if s.proc.poll() is None:
            s.proc.kill()
        s.close()
    assert s.stderr == b""


def test_percent_encoded_uri_is_found_open() -> None:
    """pygls keys open documents by the percent-decoded URI; a document
    whose URI has escapes (a CJK file name) is still diagnosed and
    answered (it was "not open" for every feature)."""
    uri = "file:///work/project/%E6%97%A5%E6%9C%AC.yaml"
    s = RawSession()
    try:
        _init(s)
        s.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "yaml", "version": 1, "text": BAD}}})
        s.send({"jsonrpc": "2.0", "id": 2, "method": "textDocument/diagnostic",
                "params": {"textDocument": {"uri": uri}}})
        assert [d["code"] for d in s.reply(2)["result"]["items"]]
        p = pos_of(BAD, "id: ask", "utf-16", delta=5)
        s.send({"jsonrpc": "2.0", "id": 3, "method": "textDocument/hover", "params": {
            "textDocument": {"uri": uri}, "position": {"line": p.line, "character": p.character}}})
        assert "send_message" in s.reply(3)["result"]["contents"]["value"]
    finally:
        assert s.close() == 0
