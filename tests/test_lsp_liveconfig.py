"""Live configuration end to end (issue 25, Deliver 2): the server registers
a watch for ``.loopc.toml`` / ``pyproject.toml`` where the client can
register it dynamically; on ``workspace/didChangeWatchedFiles`` (and on a
settings change) it re-checks the open documents, refreshes a pull client
that supports ``workspace/diagnostic/refresh`` and publishes to a push
client; a pull after a configuration edit never returns the stale cached
result, even when the client never says the file changed.  Three real
server processes: VS Code 1.65 (push, dynamic watch), Neovim 0.11 (pull,
neither refresh nor dynamic watch) and Neovim 0.11 with refresh support."""
from __future__ import annotations

import asyncio
import atexit
import shutil
import tempfile
from pathlib import Path
from typing import Any

import attrs
import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient, client_capabilities

from lsp_support import MARKS, SERVER, diagnostics, open_doc

from conftest import ROOT

pytestmark = MARKS

#: a plan with one warning (LP4702) and nothing else
PLAN = (ROOT / "tests" / "fixtures" / "analysis" / "callback_work_items_unconsumed.yaml").read_text("utf-8")
WARNING = "LP4702"


def _with_refresh(spec: str) -> lsp.ClientCapabilities:
    caps = client_capabilities(spec)
    ws = attrs.evolve(caps.workspace, diagnostics=lsp.DiagnosticWorkspaceClientCapabilities(refresh_support=True))
    return attrs.evolve(caps, workspace=ws)


#: (name, capabilities, pull?, watches dynamically?, refreshes?)
PROFILES = [
    ("vscode", lambda: client_capabilities("visual-studio-code"), False, True, False),
    ("neovim", lambda: client_capabilities("neovim@v0.11.0"), True, False, False),
    ("neovim-refresh", lambda: _with_refresh("neovim@v0.11.0"), True, False, True),
]

_root = Path(tempfile.mkdtemp(prefix="loopc-liveconfig-"))
atexit.register(shutil.rmtree, _root, True)
_count = [0]


def workspace() -> Path:
    """A new project folder (a repository root: the search stops at its
    ``.git``)."""
    _count[0] += 1
    d = _root / f"ws{_count[0]}"
    (d / ".git").mkdir(parents=True)
    return d


@pytest_lsp.fixture(config=SERVER, scope="module", params=PROFILES, ids=[p[0] for p in PROFILES])
async def client(lsp_client: LanguageClient, request: Any) -> Any:
    registrations: list[lsp.RegistrationParams] = []

    @lsp_client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
    def on_register(ls: LanguageClient, params: lsp.RegistrationParams) -> None:
        registrations.append(params)

    lsp_client.set_configuration({"loopc": {"debounce": 10}})
    lsp_client.profile = request.param  # type: ignore[attr-defined]
    lsp_client.registrations = registrations  # type: ignore[attr-defined]
    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=request.param[1](),
                                                             root_uri=_root.as_uri()))
    yield
    await lsp_client.shutdown_session()


def _codes(diags: list[lsp.Diagnostic]) -> list[Any]:
    return [d.code for d in diags]


async def _until(cond: Any, timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not cond():
        assert loop.time() < deadline, "condition never held"
        await asyncio.sleep(0.02)


async def test_watch_registered_where_the_client_can(client: LanguageClient) -> None:
    _, _, _, watches, _ = client.profile  # type: ignore[attr-defined]
    if not watches:
        await asyncio.sleep(0.2)
        assert client.registrations == []  # type: ignore[attr-defined]
        return
    await _until(lambda: client.registrations)  # type: ignore[attr-defined]
    (reg,) = [r for p in client.registrations for r in p.registrations]  # type: ignore[attr-defined]
    assert reg.method == "workspace/didChangeWatchedFiles"
    opts = reg.register_options
    globs = [w["globPattern"] if isinstance(w, dict) else w.glob_pattern
             for w in (opts["watchers"] if isinstance(opts, dict) else opts.watchers)]
    assert globs == ["**/.loopc.toml", "**/pyproject.toml"]


@pytest.mark.parametrize("name", [".loopc.toml", "pyproject.toml"])
async def test_config_file_edit_renews_diagnostics(client: LanguageClient, name: str) -> None:
    _, _, pull, watches, refreshes = client.profile  # type: ignore[attr-defined]
    d = workspace()
    uri = (d / "plan.yaml").as_uri()
    open_doc(client, uri, PLAN)
    assert _codes(await diagnostics(client, uri, pull, until=lambda g: len(g) == 1)) == [WARNING]
    before = client.diagnostic_refresh_count
    table = f'disable = ["{WARNING}"]\n'
    (d / name).write_text(table if name == ".loopc.toml" else "[tool.loopc]\n" + table, "utf-8")
    if watches or refreshes:  # a client that watches says so; the Neovim profile never does
        client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(changes=[
            lsp.FileEvent(uri=(d / name).as_uri(), type=lsp.FileChangeType.Created),
            lsp.FileEvent(uri=(d / "other.txt").as_uri(), type=lsp.FileChangeType.Created)]))
    if pull:
        if refreshes:
            await _until(lambda: client.diagnostic_refresh_count > before)
        # the first pull after the edit is already the new result
        rep = await client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=uri)))
        assert list(rep.items) == []
    else:
        assert await diagnostics(client, uri, pull, until=lambda g: g == []) == []
    # and back: the warning returns when the file is emptied
    (d / name).write_text("# nothing disabled any more\n", "utf-8")
    if watches or refreshes:
        client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(changes=[
            lsp.FileEvent(uri=(d / name).as_uri(), type=lsp.FileChangeType.Changed)]))
    if pull:
        rep = await client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=uri)))
        assert _codes(list(rep.items)) == [WARNING]
    else:
        assert _codes(await diagnostics(client, uri, pull, until=lambda g: len(g) == 1)) == [WARNING]


async def test_settings_change_renews_diagnostics(client: LanguageClient) -> None:
    _, _, pull, _, refreshes = client.profile  # type: ignore[attr-defined]
    d = workspace()
    uri = (d / "plan.yaml").as_uri()
    open_doc(client, uri, PLAN)
    assert _codes(await diagnostics(client, uri, pull, until=lambda g: len(g) == 1)) == [WARNING]
    before = client.diagnostic_refresh_count
    client.set_configuration({"loopc": {"debounce": 10, "severity": {WARNING: "off"}}})
    try:
        client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
        if refreshes:
            await _until(lambda: client.diagnostic_refresh_count > before)
        assert await diagnostics(client, uri, pull, until=lambda g: g == []) == []
    finally:
        client.set_configuration({"loopc": {"debounce": 10}})
        client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
    assert _codes(await diagnostics(client, uri, pull, until=lambda g: len(g) == 1)) == [WARNING]
