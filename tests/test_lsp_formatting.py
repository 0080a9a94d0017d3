"""``textDocument/formatting`` and ``rangeFormatting`` end to end (issue 25,
Deliver 1): the edits, applied to the editor's text by independent position
arithmetic, give exactly ``loopc fmt``'s output (whole document) or
``format_range``'s (range: the touched ``nodes:``/``edges:`` items and
sections re-emitted whole, the whole document when a range cannot be
formatted alone); a document that does not parse is refused with a clear
ResponseError.  Both client profiles (UTF-16 push, UTF-8 pull), CJK and
emoji text before every edit."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from loopc.cli.main import cli
from loopc.format import format_range, format_source
from lsp_support import GOOD, MARKS, client_fixture, new_uri, open_doc, pos_of, units

pytestmark = MARKS
client = client_fixture()

#: a plan with CJK and emoji text, written badly in three places: the entry
#: line, the first node and the edge
MESSY = (GOOD.replace('text: "Review {{ input.topic }}"', 'text: "日本語 😀 e\u0301 {{ input.topic }}"')
         .replace("entry: ask", "entry:    ask")
         .replace("      topic: {type: string, required: true}\n    sendMessage:",
                  "      topic: {type:   string,   required: true}\n    sendMessage:")
         .replace("    to: {node: done}", "    to:   {node: done}"))


def _offset(text: str, pos: lsp.Position, encoding: str) -> int:
    """Code-point offset of a protocol position, by independent arithmetic
    (LSP line breaks: LF, CRLF, CR)."""
    import re

    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
    start = starts[min(pos.line, len(starts) - 1)]
    end = starts[pos.line + 1] if pos.line + 1 < len(starts) else len(text)
    col = 0
    while start + col < end and units(text[start:start + col + 1], encoding) <= pos.character:
        if text[start + col] in "\r\n":
            break
        col += 1
    return start + col


def apply(text: str, edits: list[lsp.TextEdit] | None, encoding: str) -> str:
    spans = sorted(((_offset(text, e.range.start, encoding), _offset(text, e.range.end, encoding), e.new_text)
                    for e in edits or []), reverse=True)
    for i in range(len(spans) - 1):
        assert spans[i + 1][1] <= spans[i][0], "overlapping edits"
    for s, e, new in spans:
        text = text[:s] + new + text[e:]
    return text


def _doc(uri: str) -> lsp.TextDocumentIdentifier:
    return lsp.TextDocumentIdentifier(uri=uri)


OPTS = lsp.FormattingOptions(tab_size=2, insert_spaces=True)


async def test_capabilities_advertise_formatting(client: LanguageClient) -> None:
    caps = client.init_result.capabilities  # type: ignore[attr-defined]
    assert caps.document_formatting_provider
    assert caps.document_range_formatting_provider


@pytest.mark.parametrize("eol", ["\n", "\r\n"], ids=["lf", "crlf"])
async def test_formatting_equals_loopc_fmt(client: LanguageClient, eol: str, tmp_path: Path) -> None:
    encoding = client.profile[2]  # type: ignore[attr-defined]
    text = MESSY.replace("\n", eol)
    uri = new_uri()
    open_doc(client, uri, text)
    edits = await client.text_document_formatting_async(lsp.DocumentFormattingParams(text_document=_doc(uri),
                                                                                     options=OPTS))
    got = apply(text, edits, encoding)
    path = tmp_path / "plan.yaml"
    path.write_bytes(text.encode("utf-8"))
    assert CliRunner().invoke(cli, ["fmt", str(path)]).exit_code == 0
    assert got == path.read_bytes().decode("utf-8") == format_source(text)
    assert len(edits or []) < len(text.splitlines())  # minimal, not one whole-document replacement
    # formatted already: no edits
    uri2 = new_uri()
    open_doc(client, uri2, got)
    assert not await client.text_document_formatting_async(lsp.DocumentFormattingParams(
        text_document=_doc(uri2), options=OPTS))


async def test_range_formatting_reemits_the_touched_items(client: LanguageClient) -> None:
    encoding = client.profile[2]  # type: ignore[attr-defined]
    uri = new_uri()
    open_doc(client, uri, MESSY)
    # a range inside the first node, starting after the CJK text of its line
    rng = lsp.Range(start=pos_of(MESSY, "{{ input.topic }}", encoding),
                    end=pos_of(MESSY, "completion: sent", encoding))
    edits = await client.text_document_range_formatting_async(lsp.DocumentRangeFormattingParams(
        text_document=_doc(uri), range=rng, options=OPTS))
    got = apply(MESSY, edits, encoding)
    start, end = MESSY.index("{{ input.topic }}"), MESSY.index("completion: sent")
    assert got == format_range(MESSY, start, end)
    full = format_source(MESSY)
    # the node is formatted as loopc fmt formats it; the entry line and the edge are not touched
    assert "      topic: {type: string, required: true}\n    sendMessage:" in got
    assert "entry:    ask" in got and "to:   {node: done}" in got
    node = full[full.index("  - id: ask"):full.index("  - id: done")]
    assert node in got
    # a range over everything is the whole document
    whole = lsp.Range(start=lsp.Position(line=0, character=0), end=pos_of(MESSY, "{node: done}\n", encoding,
                                                                          nth=0, delta=13))
    edits = await client.text_document_range_formatting_async(lsp.DocumentRangeFormattingParams(
        text_document=_doc(uri), range=whole, options=OPTS))
    assert apply(MESSY, edits, encoding) == full


async def test_range_that_cannot_be_formatted_alone_formats_the_document(client: LanguageClient) -> None:
    """Sequence items indented four: re-indenting one item alone would mix
    indentations, so the whole document is formatted."""
    encoding = client.profile[2]  # type: ignore[attr-defined]
    text = MESSY.replace("\n  - id: ", "\n    - id: ").replace("\n    type: ", "\n      type: ")
    text = text.replace("\n    input:\n", "\n      input:\n").replace("\n    sendMessage:\n", "\n      sendMessage:\n")
    text = text.replace("\n      topic: {type:   string", "\n        topic: {type:   string")
    text = text.replace('\n      target: "#release"', '\n        target: "#release"')
    text = text.replace('\n      text: "日本', '\n        text: "日本').replace("\n      completion: sent", "\n        completion: sent")
    text = text.replace("\n    end: {", "\n      end: {").replace("\n    from: {", "\n      from: {")
    text = text.replace("\n    to:   {", "\n      to:   {")
    from loopc import check_source

    assert [d.code for d in check_source(text).diagnostics] == [d.code for d in check_source(MESSY).diagnostics]
    uri = new_uri()
    open_doc(client, uri, text)
    at = pos_of(text, "completion: sent", encoding)
    edits = await client.text_document_range_formatting_async(lsp.DocumentRangeFormattingParams(
        text_document=_doc(uri), range=lsp.Range(start=at, end=at), options=OPTS))
    assert apply(text, edits, encoding) == format_source(text)


async def test_formatting_refused_on_a_document_that_does_not_parse(client: LanguageClient) -> None:
    text = MESSY.replace("entry:    ask", "entry: [ask")
    uri = new_uri()
    open_doc(client, uri, text)
    for call in (client.text_document_formatting_async(lsp.DocumentFormattingParams(text_document=_doc(uri),
                                                                                    options=OPTS)),
                 client.text_document_range_formatting_async(lsp.DocumentRangeFormattingParams(
                     text_document=_doc(uri), options=OPTS,
                     range=lsp.Range(start=lsp.Position(line=0, character=0),
                                     end=lsp.Position(line=1, character=0))))):
        with pytest.raises(JsonRpcException) as exc:
            await call
        assert exc.value.code == -32803
        assert "cannot format this document: the YAML does not load: LP1" in exc.value.message


async def test_no_edits_for_a_document_that_is_no_plan(client: LanguageClient) -> None:
    uri = new_uri("compose")
    open_doc(client, uri, "services:\n  web:    {image: nginx}\n")
    assert await client.text_document_formatting_async(lsp.DocumentFormattingParams(
        text_document=_doc(uri), options=OPTS)) is None


async def test_formatting_finds_a_document_with_a_percent_encoded_uri(client: LanguageClient) -> None:
    """pygls keys open documents by the percent-decoded URI: a plan whose
    file name is CJK (sent percent-encoded, as editors do) is formatted, not
    taken for a document that is not open."""
    encoding = client.profile[2]  # type: ignore[attr-defined]
    uri = new_uri("%E6%97%A5%E6%9C%AC%20plan")
    open_doc(client, uri, MESSY)
    edits = await client.text_document_formatting_async(lsp.DocumentFormattingParams(text_document=_doc(uri),
                                                                                     options=OPTS))
    assert edits
    assert apply(MESSY, edits, encoding) == format_source(MESSY)
