"""loopc.lsp — the language server (``loopc lsp``; docs/editors.md).

A thin shell over the pure check API: :mod:`loopc.lsp.server` speaks the
protocol (pygls 2 + lsprotocol), :mod:`loopc.lsp.positions` converts
positions at the protocol edge, :mod:`loopc.lsp.analysis` runs
:func:`loopc.check_source` per document version, and the feature modules
(completion, hover, navigation, outline, code actions) read the check
result.  Never imports :mod:`loopc.cli`.
"""
from __future__ import annotations

__all__ = ["create_server", "serve"]


def create_server():
    from loopc.lsp.server import create_server as _create

    return _create()


def serve() -> None:
    from loopc.lsp.server import serve as _serve

    _serve()
