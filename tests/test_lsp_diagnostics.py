"""Language server end to end over stdio (issue 12, P0): activation,
diagnostics identical to ``loopc check``, push vs pull per client, position
encodings, survival of malformed input.  Two real server processes per
module: VS Code 1.65 capabilities (UTF-16, push) and Neovim 0.11 (UTF-8,
pull).  Protocol-spec violations detected by pytest-lsp fail the test."""
from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from loopc import check_source
from loopc.codes import docs_url
from lsp_support import (
    GOOD, MARKS, H, change_doc, client_fixture, diagnostics, expected_range, new_uri, open_doc, pos_of,
)

pytestmark = MARKS
client = client_fixture()


def prof(client: LanguageClient) -> tuple[str, str, str, bool]:
    return client.profile  # type: ignore[attr-defined]


async def test_initialize_negotiates_encoding_and_diagnostics_model(client: LanguageClient) -> None:
    _, _, encoding, pull = prof(client)
    caps = client.init_result.capabilities  # type: ignore[attr-defined]
    assert caps.position_encoding == encoding
    if pull:
        assert caps.diagnostic_provider is not None
        assert caps.diagnostic_provider.inter_file_dependencies is False
    else:
        assert caps.diagnostic_provider is None
    assert client.init_result.server_info.name == "loopc"  # type: ignore[attr-defined]


BAD = GOOD.replace("to: {node: done}", "to: {node: dne}").replace("type: string, required: true}\noutput",
                                                                  "type: string, required: true}\noutput")
UNICODE = GOOD.replace('text: "Review {{ input.topic }}"',
                       'text: "日本語 😀 e\u0301 {{ input.topc }}"')


@pytest.mark.parametrize("text", [BAD, UNICODE, H + "input: {}\ninput: {}\n", H + "nodes: [\n",
                                  BAD.replace("\n", "\r\n"), "\ufeff" + BAD, ""],
                         ids=["dangling", "cjk-emoji-combining", "duplicate-key", "yaml-error", "crlf", "bom",
                              "empty"])
async def test_diagnostics_identical_to_check(client: LanguageClient, text: str) -> None:
    _, _, encoding, pull = prof(client)
    uri = new_uri()
    open_doc(client, uri, text)
    want = check_source(text).diagnostics
    if not text:  # an empty file is not (yet) a plan: nothing until the header is typed
        if pull:
            assert await diagnostics(client, uri, pull) == []
        else:
            await client.text_document_hover_async(lsp.HoverParams(  # a round trip: the open was handled
                text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=0, character=0)))
            assert uri not in client.diagnostics
        return
    got = await diagnostics(client, uri, pull, until=lambda d: len(d) > 0)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.code == w.code
        assert g.message == w.message
        assert g.source == "loopc"
        assert g.code_description is not None and g.code_description.href == docs_url(w.code)
        assert g.severity == {"error": 1, "warning": 2, "info": 3}[w.severity.value]
        assert g.range == expected_range(text, w.span, encoding), (w, g.range)
        assert len(g.related_information or []) == len(w.related)
        for gr, wr in zip(g.related_information or [], w.related):
            assert gr.location.uri == uri
            assert gr.location.range == expected_range(text, wr.span, encoding)
            assert gr.message == wr.message
        if w.fix is not None:
            fix = g.data["fix"]
            assert fix["message"] == w.fix.message
            assert fix["applicability"] == w.fix.applicability.value
            assert fix["safe"] is w.fix.is_safe
            assert [e["newText"] for e in fix["edits"]] == [e.new_text for e in w.fix.edits]
            for e, we in zip(fix["edits"], w.fix.edits):
                r = expected_range(text, we.span, encoding)
                assert e["range"]["start"] == {"line": r.start.line, "character": r.start.character}
                assert e["range"]["end"] == {"line": r.end.line, "character": r.end.character}


async def test_unicode_columns_in_the_negotiated_encoding(client: LanguageClient) -> None:
    _, _, encoding, pull = prof(client)
    uri = new_uri()
    open_doc(client, uri, UNICODE)
    got = await diagnostics(client, uri, pull, until=lambda d: len(d) > 0)
    d = next(x for x in got if "topc" in x.message)
    # the unknown field `topc` sits after CJK, an emoji (2 UTF-16 units, 4
    # UTF-8 bytes) and a combining mark
    assert d.range.start == pos_of(UNICODE, "topc", encoding)
    assert d.range.end == pos_of(UNICODE, "topc", encoding, delta=4)


async def test_other_yaml_gets_nothing(client: LanguageClient) -> None:
    _, _, _, pull = prof(client)
    uri = new_uri("deployment")
    open_doc(client, uri, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x\n")
    got = await diagnostics(client, uri, pull, timeout=0.5) if pull else None
    if pull:
        assert got == []
    else:
        # a plan opened after it is diagnosed; the foreign file never is
        uri2 = new_uri()
        open_doc(client, uri2, BAD)
        await diagnostics(client, uri2, pull, until=lambda d: len(d) > 0)
        assert uri not in client.diagnostics


async def test_legacy_header_is_a_plan(client: LanguageClient) -> None:
    _, _, _, pull = prof(client)
    uri = new_uri()
    text = "apiVersion: loop.workflow/v1\nkind: Workflow\ntrigger: {}\n"
    open_doc(client, uri, text)
    got = await diagnostics(client, uri, pull, until=lambda d: len(d) > 0)
    assert {d.code for d in got} == {d.code for d in check_source(text).diagnostics}


async def test_incremental_edit_updates_then_fix_clears(client: LanguageClient) -> None:
    _, _, encoding, pull = prof(client)
    uri = new_uri()
    open_doc(client, uri, GOOD)
    assert await diagnostics(client, uri, pull, until=lambda d: True) == []
    # break the edge target with an incremental edit
    start = pos_of(GOOD, "{node: done}", encoding, delta=len("{node: "))
    end = pos_of(GOOD, "{node: done}", encoding, delta=len("{node: done"))
    change_doc(client, uri, 2, lsp.Range(start=start, end=end), "dne")
    got = await diagnostics(client, uri, pull, until=lambda d: len(d) > 0)
    assert any("dne" in d.message for d in got)
    # fix it again: diagnostics clear
    end2 = lsp.Position(line=start.line, character=start.character + 3)
    change_doc(client, uri, 3, lsp.Range(start=start, end=end2), "done")
    assert await diagnostics(client, uri, pull, until=lambda d: d == []) == []


async def test_close_clears_pushed_diagnostics(client: LanguageClient) -> None:
    _, _, _, pull = prof(client)
    if pull:
        pytest.skip("pull clients drop diagnostics of closed documents themselves")
    uri = new_uri()
    open_doc(client, uri, BAD)
    await diagnostics(client, uri, pull, until=lambda d: len(d) > 0)
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri)))
    assert await diagnostics(client, uri, pull, until=lambda d: d == []) == []


async def test_pull_unchanged_result_id(client: LanguageClient) -> None:
    _, _, _, pull = prof(client)
    if not pull:
        pytest.skip("push client")
    uri = new_uri()
    open_doc(client, uri, BAD)
    first = await client.text_document_diagnostic_async(
        lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=uri)))
    again = await client.text_document_diagnostic_async(
        lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=uri),
                                     previous_result_id=first.result_id))
    assert isinstance(again, lsp.RelatedUnchangedDocumentDiagnosticReport)
    assert again.result_id == first.result_id


HOSTILE = [
    H + "nodes:\n  - id: a\n    type: send_mes",                     # half-typed
    H + "nodes:\n\t- id: a\n",                                         # tab indentation
    H + "x: \x00\x01\x02\ufffd\udcff garbage [{{\n",                   # binary garbage
    H + "input:\n  a: {type: string}\n" * 1 + "#" + "x" * (2 * 1024 * 1024) + "\n",  # 2 MiB paste
    H + "a: " + "[" * 200 + "\n",                                      # nesting
]


async def test_survives_malformed_input_mid_edit(client: LanguageClient) -> None:
    _, _, _, pull = prof(client)
    uri = new_uri()
    open_doc(client, uri, GOOD)
    await diagnostics(client, uri, pull, until=lambda d: d == [])
    for v, text in enumerate(HOSTILE, start=2):
        change_doc(client, uri, v, None, text)
        want = {d.code for d in check_source(text).diagnostics}
        got = await diagnostics(client, uri, pull, until=lambda d, w=want: {x.code for x in d} == w)
        assert got
        # requests at the cursor answer (possibly nothing), never an error
        hover = await client.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=2, character=3)))
        assert hover is None or isinstance(hover, lsp.Hover)
    change_doc(client, uri, 99, None, GOOD)
    assert await diagnostics(client, uri, pull, until=lambda d: d == []) == []


async def test_over_budget_document_one_diagnostic_no_analysis(client: LanguageClient) -> None:
    """A document over the 1 MiB source budget gets one LP1010 diagnostic
    and no analysis: hover, completion, symbols answer nothing — not even
    from the last good version."""
    _, _, encoding, pull = prof(client)
    uri = new_uri()
    open_doc(client, uri, GOOD)
    await diagnostics(client, uri, pull, until=lambda d: d == [])
    big = GOOD + "# " + "x" * (1024 * 1024) + "\n"
    change_doc(client, uri, 2, None, big)
    got = await diagnostics(client, uri, pull, until=lambda d: len(d) > 0)
    assert [d.code for d in got] == ["LP1010"] and "not analysed" in got[0].message
    where = lsp.TextDocumentIdentifier(uri=uri)
    at = pos_of(GOOD, "send_message", encoding)
    assert await client.text_document_hover_async(lsp.HoverParams(text_document=where, position=at)) is None
    comp = await client.text_document_completion_async(lsp.CompletionParams(text_document=where, position=at))
    assert comp is None or not (comp.items if isinstance(comp, lsp.CompletionList) else comp)
    syms = await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(text_document=where))
    assert not syms
    change_doc(client, uri, 3, None, GOOD)
    assert await diagnostics(client, uri, pull, until=lambda d: d == []) == []


WARN_PLAN = (Path(__file__).parent / "fixtures" / "analysis" / "callback_work_items_unconsumed.yaml").read_text()


async def test_project_configuration_and_suppressions_apply(client: LanguageClient, tmp_path: Path) -> None:
    """The editor shows what `loopc check` shows in the document's folder:
    `.loopc.toml` and inline suppressions apply."""
    _, _, _, pull = prof(client)
    (tmp_path / ".git").mkdir()
    sub = tmp_path / "plans"
    sub.mkdir()
    uri = (sub / "p.yaml").as_uri()
    open_doc(client, uri, WARN_PLAN)
    got = await diagnostics(client, uri, pull, until=lambda d: len(d) > 0)
    assert [d.code for d in got] == ["LP4702"]
    (tmp_path / ".loopc.toml").write_text('disable = ["LP4702"]\n')
    change_doc(client, uri, 2, None, WARN_PLAN + "\n")
    got = await diagnostics(client, uri, pull, until=lambda d: d == [])
    from loopc.lint.config import from_mapping

    cfg, _ = from_mapping({"disable": ["LP4702"]})
    assert check_source(WARN_PLAN + "\n", config=cfg).diagnostics == ()
