"""Editor features as plain data (docs/editors.md#features,
docs/architecture.md#layers): hover, document symbols, completion, semantic
tokens, code lens, inlay hints, call hierarchy, go to definition, find
references and rename, each computed over the check result of one
:class:`~loopc.ide.document.Document` (:func:`loopc.check_source`).

Results are frozen ``attrs`` classes, lists and tuples with positions as
code-point offsets into the editor's text — no protocol types: the
language server (:mod:`loopc.lsp`) converts them to LSP objects in the
negotiated encoding, and never reaches below the pipeline itself.  This
layer sits above :mod:`loopc.pipeline` and below :mod:`loopc.lsp` and the
CLI, and imports neither ``lsprotocol`` nor ``pygls`` (.importlinter).

Modules: :mod:`~loopc.ide.document` (the document and :class:`Range`),
:mod:`~loopc.ide.hover`, :mod:`~loopc.ide.symbols` (navigation, rename,
outline), :mod:`~loopc.ide.completion` (with :mod:`~loopc.ide.cursor`, the
text-only YAML structure reader, and :mod:`~loopc.ide.keys`, its tables
derived from the kinds), :mod:`~loopc.ide.semantic` and
:mod:`~loopc.ide.graph` (call hierarchy, code lens, inlay hints).
"""

from __future__ import annotations

from loopc.ide.document import Document, Range

__all__ = ["Document", "Range"]
