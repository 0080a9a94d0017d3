"""The language server's stdio transport (docs/editors.md#malformed-messages):
the base protocol's ``Content-Length`` framing made robust against wrong or
hostile lengths (:class:`ProtocolIn`), a standard output whose loss ends the
process with one line (:class:`ProtocolOut`), and the hand-written JSON-RPC
answers the server sends where pygls cannot (:func:`send_error_response`,
:func:`send_message`, :func:`send_parse_error`)."""
from __future__ import annotations

import json
import re
import sys
from typing import Any

from lsprotocol import types as lsp


class ProtocolOut:
    """Standard output for the protocol: when it cannot be written (the
    client closed the pipe, a full device), nothing more can ever reach the
    client, so the server stops at once with one short line on standard
    error, ``loopc: cannot write to standard output: <reason>``, and exit
    status 2 — the same as every other ``loopc`` command
    (:mod:`loopc.cli.iofail`) — instead of logging a traceback per
    message."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def write(self, data: bytes) -> None:
        try:
            self.raw.write(data)
        except OSError as exc:
            _output_lost(exc)

    def flush(self) -> None:
        try:
            self.raw.flush()
        except OSError as exc:
            _output_lost(exc)

    def close(self) -> None:
        try:
            self.raw.close()
        except OSError:
            pass


#: The largest protocol message the server reads (its Content-Length): a
#: document is at most 1 MiB of source, so 64 MiB leaves room for any
#: honest message in any encoding; a larger claim ends the session.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
#: The longest header line read at once (longer ones arrive in pieces, which
#: the framing ignores as malformed headers).
MAX_HEADER_LINE = 64 * 1024


#: A header that starts a message, wherever it appears in the stream.  No
#: JSON text can hold it: outside a string ``Content-Length`` is not JSON,
#: inside one a raw CR is not allowed — so a body that contains it was
#: framed with a wrong ``Content-Length``.
_HEADER = re.compile(rb"Content-Length:[ \t]*([0-9]+)\r\n")
#: Any other header field of the base protocol (``Content-Type: ...``).
_FIELD = re.compile(rb"[A-Za-z0-9-]+:[^\r\n]*\r\n")


class ProtocolIn:
    """Standard input for the protocol, with the framing made robust
    (docs/editors.md#malformed-messages):

    * a message whose Content-Length is over :data:`MAX_MESSAGE_BYTES`
      (``Content-Length: 100000000000``) is never allocated or waited for;
      the server stops with one line on standard error and exit status 2;
    * a wrong Content-Length resynchronises at the next message: a body
      that runs into the next message's ``Content-Length:`` header (the
      claim was too long) ends before it, and a header that follows the
      tail of a body (the claim was too short) is split off that tail; the
      broken message itself gets the -32700 Parse error answer and the next
      message is read normally;
    * a ``Content-Length`` header that another one interrupts before its
      blank line, or that is followed by something other than header
      fields, is dropped: the stream resumes at the next header;
    * no header line is read whole beyond :data:`MAX_HEADER_LINE`, and junk
      between messages is skipped in bounded memory.

    pygls reads through :meth:`readline` and :meth:`read` from one thread at
    a time."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self._buf = bytearray()
        self._eof = False
        self._blank = False

    def _fill(self) -> bool:
        """Read what is available (at least one byte unless at end of input)."""
        if self._eof:
            return False
        reader = getattr(self.raw, "read1", None)
        chunk = reader(65536) if reader is not None else self.raw.read(1)
        if not chunk:
            self._eof = True
            return False
        self._buf += chunk
        return True

    def readline(self, *args: Any) -> bytes:
        """The next header block, normalised for pygls's reader loop: the
        ``Content-Length: N`` line, then (on the next call) the blank line.
        Bytes before a ``Content-Length`` header (the tail of a body framed
        too short, garbage) are skipped; so are other header fields
        (``Content-Type``); a header block that another ``Content-Length``
        line interrupts before its blank line restarts there; a block that
        runs into anything else is dropped and the search goes on.  End of
        input: ``b""``."""
        if self._blank:
            self._blank = False
            return b"\r\n"
        while True:
            m = _HEADER.search(self._buf)
            if m is None:
                if len(self._buf) > 64:
                    del self._buf[: len(self._buf) - 64]  # junk: keep only what may start a header
                if not self._fill():
                    return b""
                continue
            length = m.group(1)
            pos = m.end() - m.start()
            del self._buf[: m.start()]
            while True:  # the rest of the header block, up to its blank line
                nl = self._buf.find(b"\n", pos, pos + MAX_HEADER_LINE)
                if nl < 0:
                    if len(self._buf) - pos >= MAX_HEADER_LINE:
                        break  # a header line too long: not a header block
                    if not self._fill():
                        return b""
                    continue
                line = bytes(self._buf[pos: nl + 1])
                if line == b"\r\n":
                    del self._buf[: nl + 1]
                    self._blank = True
                    return b"Content-Length: " + length + b"\r\n"
                if _HEADER.fullmatch(line) or not _FIELD.fullmatch(line):
                    break  # another Content-Length, or not a header field: restart the search there
                pos = nl + 1
            del self._buf[: pos]

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0 or n > MAX_MESSAGE_BYTES:
            _fatal(f"loopc: language server message of {n} bytes is over the limit of {MAX_MESSAGE_BYTES:,} bytes")
        scanned = 0
        while True:
            m = _HEADER.search(self._buf, max(0, scanned - 32), min(n + 32, len(self._buf)))
            if m is not None and m.start() < n:
                body = bytes(self._buf[: m.start()])  # framed too long: stop at the next message
                del self._buf[: m.start()]
                return body or b" "
            if len(self._buf) >= n:
                body = bytes(self._buf[:n])
                del self._buf[:n]
                return body
            scanned = len(self._buf)
            if not self._fill():
                body = bytes(self._buf)
                self._buf.clear()
                return body

    def close(self) -> None:
        self.raw.close()


def _fatal(line: str) -> None:
    import os

    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(2)


def _output_lost(exc: OSError) -> None:
    import os

    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.close(fd)
    except OSError:
        pass
    reason = exc.strerror or str(exc) or type(exc).__name__
    try:
        sys.stderr.write(f"loopc: cannot write to standard output: {reason}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(2)


#: What ``json.loads`` raises on a body that is not one JSON value it can
#: read: invalid JSON, invalid UTF-8, nesting past the recursion limit.
PARSE_ERRORS: tuple[type[BaseException], ...] = (json.JSONDecodeError, UnicodeDecodeError, RecursionError)


def send_error_response(writer: Any, code: int, message: str, msg_id: int | str | None = None) -> None:
    """Write one JSON-RPC 2.0 error response ``{"jsonrpc": "2.0", "id":
    msg_id, "error": {code, message}}`` to ``writer`` (the transport pygls
    writes to: one ``write(bytes)`` per message), framed with the LSP base
    protocol's ``Content-Length`` header (bytes of the UTF-8 body).  No
    writer (no transport yet): nothing is sent."""
    send_message(writer, {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


def send_message(writer: Any, message: dict[str, Any]) -> None:
    """Write one JSON-RPC 2.0 message (a JSON object) to ``writer`` (the
    transport pygls writes to: one ``write(bytes)`` per message), framed
    with the LSP base protocol's ``Content-Length`` header (bytes of the
    UTF-8 body).  No writer (no transport yet): nothing is sent."""
    if writer is None:
        return
    body = json.dumps(message).encode("utf-8")
    writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)


def send_parse_error(writer: Any, error: BaseException) -> None:
    """The -32700 Parse error response (``id: null``) for a body ``json.loads``
    could not read (``error`` one of :data:`PARSE_ERRORS`)."""
    detail = "nested too deeply" if isinstance(error, RecursionError) else str(error)[:200]
    send_error_response(writer, lsp.ErrorCodes.ParseError.value, f"Parse error: {detail}")
