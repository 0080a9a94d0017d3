"""The ``positionEncoding`` setting (docs/editors.md#settings, #vim): a
client that offers no position encoding (Vim's ALE reads columns as bytes,
vim-lsp as code points) names one in ``initializationOptions``; the server
reports it in ``capabilities.positionEncoding`` and uses it both ways —
diagnostic ranges out, incremental edits in.  A client that negotiates an
encoding keeps it; the setting in the workspace configuration, which comes
after ``initialize``, cannot change the encoding and says so in the log.
One real server per case."""
from __future__ import annotations

from typing import Any

import attrs
import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient, client_capabilities

from loopc.lsp.settings import Settings, parse_settings
from lsp_support import GOOD, MARKS, SERVER, change_doc, diagnostics, new_uri, open_doc, pos_of


#: the unknown field ``topc`` follows CJK text, an emoji (4 UTF-8 bytes, 2
#: UTF-16 units, 1 code point) and a combining mark on its line
UNICODE = GOOD.replace('text: "Review {{ input.topic }}"', 'text: "日本語 😀 e\u0301 {{ input.topc }}"')

#: (name, encodings the client offers, initializationOptions, workspace settings, expected encoding)
CASES = [
    ("ale", None, {"positionEncoding": "utf-8"}, {"positionEncoding": "utf-16"}, "utf-8"),
    ("vim-lsp", None, {"loopc": {"positionEncoding": "UTF-32"}}, {}, "utf-32"),
    ("unset", None, None, {}, "utf-16"),
    ("negotiated", ["utf-16"], {"positionEncoding": "utf-32"}, {}, "utf-16"),
]


@pytest_lsp.fixture(config=SERVER, scope="module", params=CASES, ids=[c[0] for c in CASES])
async def client(lsp_client: LanguageClient, request: Any) -> Any:
    _, offered, init, settings, _ = request.param
    caps = client_capabilities("visual-studio-code")  # push diagnostics, workspace/configuration
    caps = attrs.evolve(caps, general=attrs.evolve(caps.general or lsp.GeneralClientCapabilities(),
                                                   position_encodings=offered))
    if lsp.CLIENT_REGISTER_CAPABILITY not in lsp_client.protocol.fm.features:
        lsp_client.feature(lsp.CLIENT_REGISTER_CAPABILITY)(lambda ls, params: None)
    lsp_client.set_configuration({"loopc": {"debounce": 0, **settings}})
    lsp_client.case = request.param  # type: ignore[attr-defined]
    lsp_client.init_result = await lsp_client.initialize_session(  # type: ignore[attr-defined]
        lsp.InitializeParams(capabilities=caps, initialization_options=init, root_uri="file:///work/project"))
    yield
    await lsp_client.shutdown_session()


@MARKS[0]
@MARKS[1]
async def test_reported_encoding_is_used_both_ways(client: LanguageClient) -> None:
    """``capabilities.positionEncoding`` is the expected encoding; the
    diagnostic after the non-ASCII text is at that encoding's columns, and an
    incremental edit addressed in it (``topc`` → ``topic``) lands on the
    right characters, so the diagnostic goes away."""
    encoding = client.case[4]  # type: ignore[attr-defined]
    assert client.init_result.capabilities.position_encoding == encoding  # type: ignore[attr-defined]
    uri = new_uri("enc")
    open_doc(client, uri, UNICODE)
    got = await diagnostics(client, uri, False, until=lambda d: any("topc" in x.message for x in d))
    d = next(x for x in got if "topc" in x.message)
    assert d.range.start == pos_of(UNICODE, "topc", encoding)
    assert d.range.end == pos_of(UNICODE, "topc", encoding, delta=4)
    start = pos_of(UNICODE, "topc", encoding, delta=3)
    change_doc(client, uri, 2, lsp.Range(start=start, end=start), "i")
    assert await diagnostics(client, uri, False, until=lambda d: d == []) == []
    info = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(command="loopc.debugInfo"))
    assert info["positionEncoding"] == encoding


@MARKS[0]
@MARKS[1]
async def test_workspace_setting_cannot_change_the_encoding(client: LanguageClient) -> None:
    """The ALE case also answers ``workspace/configuration`` with another
    ``positionEncoding``: the encoding stays the one reported at
    ``initialize``, and a warning in the log says why."""
    name, _, _, settings, encoding = client.case  # type: ignore[attr-defined]
    if "positionEncoding" not in settings:
        pytest.skip("this case sets no positionEncoding in the workspace configuration")
    info = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(command="loopc.debugInfo"))
    assert info["positionEncoding"] == encoding
    assert info["settings"]["positionEncoding"] == settings["positionEncoding"]
    warnings = [m.message for m in client.log_messages if m.type == lsp.MessageType.Warning]
    assert any("positionEncoding" in m and "not applied" in m for m in warnings), warnings


def test_parse_position_encoding() -> None:
    assert parse_settings({"positionEncoding": "utf-8"}).position_encoding == "utf-8"
    assert parse_settings({"loopc": {"positionEncoding": "UTF-32"}}).position_encoding == "utf-32"
    for bad in ("utf-7", "", 8, None, ["utf-8"]):
        assert parse_settings({"positionEncoding": bad}).position_encoding is None
    assert parse_settings(None) == Settings()
    assert Settings(position_encoding="utf-16").to_json()["positionEncoding"] == "utf-16"
