"""Where the language server's log goes (docs/editors.md#logs).

Quiet by default: nothing on standard error in a normal session.  loopc's
own records (logger ``loopc``: a configuration file that is ignored, a
feature that failed) go to the client as ``window/logMessage`` with the
matching level (error, warning, info; debug with ``--verbose``); pygls's
records (logger ``pygls``) reach the client only at error level, as one line
without a traceback.  ``loopc lsp --log-file PATH`` also writes both to
``PATH`` with timestamps and tracebacks; ``--verbose`` lowers both to debug
(pygls then logs every message sent and received) and, without a log file,
writes them to standard error.
"""
from __future__ import annotations

import logging
import sys
import threading
from typing import Any

from lsprotocol import types as lsp

_TYPES = ((logging.ERROR, lsp.MessageType.Error), (logging.WARNING, lsp.MessageType.Warning),
          (logging.INFO, lsp.MessageType.Info))
_sending = threading.local()


def message_type(levelno: int) -> lsp.MessageType:
    """The ``window/logMessage`` type of a logging level."""
    for level, t in _TYPES:
        if levelno >= level:
            return t
    return lsp.MessageType.Log


class ClientLogHandler(logging.Handler):
    """Sends log records to the client as ``window/logMessage`` through the
    server's transport, from the message loop's thread (a record logged on
    a check worker is handed over to the loop).  A record logged while one
    is being sent (pygls logging a failed write) is dropped, never sent
    recursively.  ``tracebacks``: include the record's traceback."""

    def __init__(self, server: Any, level: int, *, tracebacks: bool = True) -> None:
        super().__init__(level)
        self.server = server
        self.tracebacks = tracebacks

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(_sending, "active", False):
            return
        try:
            text = record.getMessage()
            if self.tracebacks and record.exc_info:
                text += "\n" + logging.Formatter().formatException(record.exc_info)
            params = lsp.LogMessageParams(type=message_type(record.levelno), message=text)
        except Exception:  # noqa: BLE001 - a log record never takes the server down
            return
        loop = getattr(self.server, "loop", None)
        if loop is None:
            return
        if threading.get_ident() == getattr(self.server, "loop_thread", None):
            self._send(params)
        else:
            try:
                loop.call_soon_threadsafe(self._send, params)
            except RuntimeError:  # the loop is closed: the session is over
                pass

    def _send(self, params: lsp.LogMessageParams) -> None:
        _sending.active = True
        try:
            self.server.window_log_message(params)
        except Exception:  # noqa: BLE001
            pass
        finally:
            _sending.active = False


def configure(server: Any, *, log_file: str | None = None, verbose: bool = False) -> None:
    """Route the ``loopc`` and ``pygls`` loggers as the module docstring
    says, for a server that owns its process (``loopc lsp``).  A log file
    that cannot be opened is reported once on standard error and ignored."""
    ours = logging.getLogger("loopc")
    theirs = logging.getLogger("pygls")
    for lg in (ours, theirs):
        lg.propagate = False
        for h in list(lg.handlers):
            lg.removeHandler(h)
    ours.setLevel(logging.DEBUG if verbose else logging.INFO)
    theirs.setLevel(logging.DEBUG if verbose else logging.WARNING)
    ours.addHandler(ClientLogHandler(server, logging.DEBUG if verbose else logging.INFO))
    theirs.addHandler(ClientLogHandler(server, logging.ERROR, tracebacks=verbose))
    target: logging.Handler | None = None
    if log_file:
        try:
            target = logging.FileHandler(log_file, encoding="utf-8")
        except OSError as exc:
            try:
                sys.stderr.write(f"loopc: cannot open the log file {log_file}: {exc.strerror or exc}\n")
            except (OSError, ValueError):
                pass
    elif verbose:
        target = logging.StreamHandler(sys.stderr)
    if target is not None:
        target.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        for lg in (ours, theirs):
            lg.addHandler(target)
