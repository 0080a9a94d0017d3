"""A check that starts before the server has read the editor's settings
(issue 25 follow-up; docs/editors.md#settings): the result of a check that
ran while the settings changed is never kept, for push and pull.

The client holds back its answer to the server's ``workspace/configuration``
request until the document is open and its first check is running (the
first check of a fresh server also loads the checker, so it runs for a
while), then answers with a ``severity`` override.  Before the fix that
check's result was stored after the settings had cleared the cache: a push
client kept the diagnostics that ignore ``loopc.severity``, and a pull
client re-pulling after the server's own ``workspace/diagnostic/refresh``
got them again.  Ordering and results are asserted, never durations."""
from __future__ import annotations

import asyncio
from typing import Any

import attrs
import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient, client_capabilities

from lsp_support import GOOD, MARKS, SERVER, diagnostics, new_uri, open_doc

#: one server (and event loop) per test: the settings are asked for once, at the start
pytestmark = [pytest.mark.asyncio(loop_scope="function"), MARKS[1]]

#: a plan with one error (LP2007, an unknown top-level key) and nothing else
EARLY = GOOD.replace("\nnodes:\n", "\nbogus: 1\nnodes:\n", 1)
CODE = "LP2007"
SETTINGS = {"loopc": {"debounce": 0, "severity": {CODE: "warning"}}}


def _with_refresh(spec: str) -> lsp.ClientCapabilities:
    caps = client_capabilities(spec)
    ws = attrs.evolve(caps.workspace, diagnostics=lsp.DiagnosticWorkspaceClientCapabilities(refresh_support=True))
    return attrs.evolve(caps, workspace=ws)


#: (name, capabilities, pull?)
PROFILES = [
    ("vscode", lambda: client_capabilities("visual-studio-code"), False),
    ("neovim-refresh", lambda: _with_refresh("neovim@v0.11.0"), True),
]


@pytest_lsp.fixture(config=SERVER, scope="function", params=PROFILES, ids=[p[0] for p in PROFILES])
async def client(lsp_client: LanguageClient, request: Any) -> Any:
    gate = asyncio.Event()
    asked: list[lsp.ConfigurationParams] = []

    async def configuration(params: lsp.ConfigurationParams) -> list[Any]:
        asked.append(params)
        await gate.wait()
        return [SETTINGS.get(item.section or "", None) for item in params.items]

    # the server asks for its settings right after ``initialized``: this
    # answer waits until the test opens the gate
    lsp_client.protocol.fm.features[lsp.WORKSPACE_CONFIGURATION] = configuration
    if lsp.CLIENT_REGISTER_CAPABILITY not in lsp_client.protocol.fm.features:
        lsp_client.feature(lsp.CLIENT_REGISTER_CAPABILITY)(lambda ls, params: None)
    lsp_client.profile = request.param  # type: ignore[attr-defined]
    lsp_client.gate = gate  # type: ignore[attr-defined]
    lsp_client.asked = asked  # type: ignore[attr-defined]
    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=request.param[1](),
                                                             root_uri="file:///work/project"))
    try:
        yield
    finally:
        gate.set()
        await lsp_client.shutdown_session()


async def _asked(client: LanguageClient) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 10
    while not client.asked:  # type: ignore[attr-defined]
        assert loop.time() < deadline, "the server never asked for its settings"
        await asyncio.sleep(0.01)


async def test_check_started_before_the_settings_is_not_kept(client: LanguageClient) -> None:
    """The document is opened (and, for a pull client, pulled) while the
    settings are still on their way; once they arrive, the diagnostics the
    client ends up with follow them (``LP2007`` as a warning, not an
    error) — pushed, or pulled again after the server's refresh request."""
    _, _, pull = client.profile  # type: ignore[attr-defined]
    await _asked(client)
    uri = new_uri("early")
    open_doc(client, uri, EARLY)
    first = asyncio.ensure_future(client.text_document_diagnostic_async(
        lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=uri)))) if pull else None
    await asyncio.sleep(0.05)  # the first check (under the default settings) has started
    before = client.diagnostic_refresh_count
    client.gate.set()  # type: ignore[attr-defined]
    if pull:
        assert first is not None
        await asyncio.wait_for(first, 60)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 10
        while client.diagnostic_refresh_count == before:  # the settings changed: the server asks to re-pull
            assert loop.time() < deadline, "no workspace/diagnostic/refresh after the settings arrived"
            await asyncio.sleep(0.01)
        rep = await client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=uri)))
        got = list(rep.items)
    else:
        got = await diagnostics(client, uri, pull, timeout=60)
        await asyncio.sleep(0.3)  # anything published later replaces it
        got = list(client.diagnostics[uri])
    assert [(d.code, d.severity) for d in got] == [(CODE, lsp.DiagnosticSeverity.Warning)]

