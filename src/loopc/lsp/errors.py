"""The language server's refusal (docs/editors.md): a module of its own so
that the feature modules raise it without importing the server."""

from __future__ import annotations

from pygls.exceptions import JsonRpcException


class Refused(JsonRpcException):
    """A request the server declines on purpose (an invalid rename, a
    document that cannot be formatted): answered with a ``ResponseError``
    carrying ``message`` and ``code`` (default -32803 RequestFailed), no
    traceback, no log line at the default level."""

    def __init__(self, message: str, code: int = -32803) -> None:
        super().__init__(message=message, code=code)
