"""``textDocument/formatting`` and ``textDocument/rangeFormatting``
(docs/editors.md#formatting): exactly what ``loopc fmt`` writes.

Whole-document formatting returns the edits that turn the editor's text into
:func:`loopc.format.format_source`'s result; range formatting those that
turn it into :func:`loopc.format.format_range`'s (the ``nodes:``/``edges:``
items and top-level sections the range touches, re-emitted whole; the whole
document when that range cannot be formatted alone).  The edits are minimal
(one per changed run of lines) and, applied to the text the request was made
for, give that result exactly.

A document that is no plan gets no edits; one that cannot be formatted (its
YAML does not load, the safety net refuses) gets a ``ResponseError``
(RequestFailed, -32803) whose message says why, as ``loopc fmt`` prints it;
a document edited while it was being formatted, ContentModified (-32801).
The formatting runs in a worker thread, off the message loop.
"""
from __future__ import annotations

import asyncio
import difflib
import re
from typing import Any

from lsprotocol import types as lsp

from loopc.lsp.activation import is_plan_text
from loopc.lsp.positions import EditorIndex

#: RequestFailed (LSP 3.17): the request was valid but could not be served
REQUEST_FAILED = -32803
#: ContentModified (LSP 3.17): the document changed while the request ran
CONTENT_MODIFIED = -32801

#: one line with its terminator: the LSP's line breaks only (LF, CRLF, CR)
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def _lines(text: str) -> list[str]:
    return _LINE.findall(text)


def text_edits(old: str, new: str, index: EditorIndex) -> list[lsp.TextEdit]:
    """The minimal line-wise edits that turn ``old`` (the editor's text,
    ``index`` its :class:`EditorIndex` in the negotiated encoding) into
    ``new``: one edit per changed run of lines, in document order, none
    overlapping; ``[]`` when equal."""
    if old == new:
        return []
    a, b = _lines(old), _lines(new)
    starts = [0]
    for line in a:
        starts.append(starts[-1] + len(line))
    edits: list[lsp.TextEdit] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        edits.append(lsp.TextEdit(range=index.offsets_range(starts[i1], starts[i2]), new_text="".join(b[j1:j2])))
    return edits


def formatted(text: str, span: tuple[int, int] | None) -> str:
    """What ``loopc fmt`` makes of ``text`` (``span`` ``None``), or of the
    pieces the code-point range ``span`` touches.  Raises
    :class:`loopc.format.FormatError`."""
    from loopc.format import format_range, format_source

    if span is None:
        return format_source(text)
    return format_range(text, span[0], span[1])


async def format_document(server: Any, uri: str, rng: lsp.Range | None) -> list[lsp.TextEdit] | None:
    """The edits of a formatting request on the open document ``uri`` (the
    whole document when ``rng`` is ``None``).  Raises the JSON-RPC errors
    the module docstring names."""
    from loopc.format import FormatError
    from loopc.lsp.errors import Refused

    doc = server._open_doc(uri)  # by the percent-decoded URI, as every feature looks documents up
    if doc is None:
        return None
    text, version = doc.source, doc.version
    if not is_plan_text(text):
        return None
    index = EditorIndex(text, server.encoding)
    span = None if rng is None else (index.offset(rng.start), index.offset(rng.end))
    try:
        new = await asyncio.to_thread(formatted, text, span)
    except FormatError as exc:
        raise Refused(f"loopc fmt: cannot format this document: {exc}", REQUEST_FAILED) from None
    now = server._open_doc(uri)
    if now is None or now.version != version or now.source != text:
        raise Refused("loopc fmt: the document changed while it was formatted", CONTENT_MODIFIED)
    return text_edits(text, new, index)


def register(server: Any) -> None:
    """Register the two formatting handlers on ``server`` (a LoopcServer)."""

    @server.feature(lsp.TEXT_DOCUMENT_FORMATTING, lsp.DocumentFormattingOptions())
    async def on_formatting(ls: Any, params: lsp.DocumentFormattingParams) -> Any:
        return await _guard(ls, params.text_document.uri, None)

    @server.feature(lsp.TEXT_DOCUMENT_RANGE_FORMATTING, lsp.DocumentRangeFormattingOptions())
    async def on_range_formatting(ls: Any, params: lsp.DocumentRangeFormattingParams) -> Any:
        return await _guard(ls, params.text_document.uri, params.range)


async def _guard(ls: Any, uri: str, rng: lsp.Range | None) -> Any:
    """:func:`format_document`; an unexpected failure answers no edits and is
    logged (never a crash of the session)."""
    from pygls.exceptions import JsonRpcException

    try:
        return await format_document(ls, uri, rng)
    except JsonRpcException:
        raise
    except Exception:  # noqa: BLE001 - a feature never takes the server down
        ls.log_error("formatting", uri)
        return None
