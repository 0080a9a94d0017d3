"""The loopc language server (pygls 2): document sync, diagnostics and the
registration of every feature (docs/editors.md).

A thin shell over the pure check API: every handler converts protocol
positions to offsets (:mod:`loopc.lsp.positions`), asks the analysis of the
current document version (:mod:`loopc.lsp.analysis`) or a feature module,
and converts back.  No handler raises: a failure inside a feature answers
"nothing here" and is logged to the client (``window/logMessage``).

Diagnostics are delivered one way per client, never both:

* **pull** (``textDocument/diagnostic``) when the client declares
  ``textDocument.diagnostic`` — the ``diagnosticProvider`` capability is then
  advertised statically in the ``initialize`` result, and nothing is pushed;
* **push** (``textDocument/publishDiagnostics``) otherwise, debounced per
  document (``debounce`` setting): a new edit cancels the pending run, and a
  run whose version is no longer current is dropped; closing a document
  publishes an empty list.
"""
from __future__ import annotations

import asyncio
import functools
import json
import logging
import re
import sys
import traceback
from typing import Any, Callable

import attrs
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from loopc import __version__
from loopc.lsp.analysis import Analysis, analyse
from loopc.lsp.positions import choose_encoding
from loopc.lsp.settings import Settings, parse_settings

log = logging.getLogger("loopc.lsp")

SERVER_NAME = "loopc"
CONFIG_SECTION = "loopc"
DEBUG_INFO_COMMAND = "loopc.debugInfo"
#: Checks between two full garbage collections (see LoopcServer._after_check).
GC_EVERY = 32
GC_IDLE_DELAY = 0.3


#: What :meth:`LoopcProtocol.structure_message` returns for a request it
#: has already answered with an error: :meth:`LoopcProtocol.handle_message`
#: drops it.
_ANSWERED = object()


class LoopcProtocol(LanguageServerProtocol):
    """pygls protocol with loopc's negotiation: UTF-8 positions where the
    client offers them (pygls alone takes the client's first preference), and
    ``diagnosticProvider`` only for clients that pull diagnostics."""

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(self, params: lsp.InitializeParams) -> Any:  # type: ignore[override]
        server: LoopcServer = self._server  # type: ignore[assignment]
        caps = params.capabilities
        offered = None
        if caps.general is not None and caps.general.position_encodings is not None:
            offered = [str(getattr(e, "value", e)) for e in caps.general.position_encodings]
        encoding = choose_encoding(offered)
        server.encoding = encoding
        server.pull = caps.text_document is not None and caps.text_document.diagnostic is not None
        server.init_options = params.initialization_options
        general = attrs.evolve(caps.general or lsp.GeneralClientCapabilities(),
                               position_encodings=[encoding])
        params = attrs.evolve(params, capabilities=attrs.evolve(caps, general=general))
        result = yield from super().lsp_initialize(params)
        from loopc.lsp.documents import LoopcWorkspace

        self._workspace = LoopcWorkspace.replacing(self.workspace, encoding)
        if not server.pull:
            result.capabilities.diagnostic_provider = None
        result.capabilities.position_encoding = encoding
        return result

    # -- bookkeeping of pygls 2.1 ----------------------------------------------
    def _execute_handler(self, msg_id: Any, handler: Any, callback: Any, args: Any = None,
                         kwargs: Any = None) -> None:
        """pygls 2.1 stores the Future of every coroutine and generator
        handler in ``_request_futures`` under ``msg_id`` — for a notification
        (and for each step of a generator handler) a fresh UUID — and only
        a request's reply pops it again: every ``didChange`` leaked one
        Future (45.8 → 122 MB over 40,000 edits).  Here each stored Future
        removes itself when done (a request's reply has popped it already;
        ``$/cancelRequest`` still finds a request's Future while it runs)."""
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        fut = self._request_futures.get(msg_id)
        if fut is not None:
            fut.add_done_callback(functools.partial(self._forget, msg_id))

    def _forget(self, key: Any, fut: Any) -> None:
        if self._request_futures.get(key) is fut:
            del self._request_futures[key]

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        """``$/cancelRequest``: a request still running (an ``async``
        handler waiting for its check) is cancelled and answered with
        -32800 RequestCancelled; one already answered — the normal race,
        which every editor hits — is ignored without a word (pygls logs a
        warning for each)."""
        future = self._request_futures.pop(msg_id, None)
        if future is not None and future.cancel():
            log.debug("cancelled request %r", msg_id)

    def _send_handler_result(self, future: Any, *, msg_id: Any) -> None:
        """A request refused on purpose (the handler raised a
        ``JsonRpcException``, e.g. a rename the symbol index refuses) is a
        ``ResponseError`` with its code and message and nothing else; pygls
        would also log its traceback and report it as a server error."""
        if not future.cancelled() and isinstance(future.exception(), JsonRpcException):
            self._request_futures.pop(msg_id, None)
            exc = future.exception()
            log.debug("request %r refused: %s", msg_id, exc)
            self._send_response(msg_id, error=exc.to_response_error())
            return
        super()._send_handler_result(future, msg_id=msg_id)

    def structure_message(self, data: dict[str, Any]) -> Any:
        """A JSON-RPC message whose ``params`` do not fit its method
        (docs/editors.md#malformed-messages): a request (it has an ``id``)
        gets the JSON-RPC 2.0 answer, -32602 Invalid params, with its id; a
        notification, which cannot be answered, a ``window/showMessage``
        error; either way one line on standard error and no traceback, and
        the session goes on.  pygls alone would leave the client waiting for
        the reply.  ``data`` is one JSON object of the message (``json.loads``
        calls this for every object, innermost first)."""
        try:
            return super().structure_message(data)
        except JsonRpcException:
            method = data.get("method")
            if "jsonrpc" not in data or "error" in data or not isinstance(method, str):
                raise
            raw_id = data.get("id")
            if "id" not in data:
                send_message(self.writer, {"jsonrpc": "2.0", "method": "window/showMessage", "params": {
                    "type": lsp.MessageType.Error.value,
                    "message": f"loopc: ignored a {method!r} notification whose params do not fit the method"}})
                _warn(f"loopc: ignored a {method} notification whose params do not fit the method")
                return _ANSWERED
            msg_id = raw_id if isinstance(raw_id, (int, str)) and not isinstance(raw_id, bool) else None
            send_error_response(self.writer, lsp.ErrorCodes.InvalidParams.value,
                                f"Invalid params: the params of {method!r} do not fit the method", msg_id)
            _warn(f"loopc: answered request {raw_id!r} ({method}) with Invalid params: its params do not fit")
            return _ANSWERED

    def handle_message(self, message: Any) -> None:
        """Valid JSON that is no JSON-RPC message object (a number, an array,
        an object without ``jsonrpc``) gets the JSON-RPC 2.0 answer, -32600
        Invalid Request, with the object's ``id`` when it has a usable one
        and ``null`` otherwise (docs/editors.md#malformed-messages); pygls
        would fail on it with a traceback.  Everything else goes to pygls."""
        if message is _ANSWERED:
            return
        if hasattr(message, "jsonrpc"):
            if self._shutdown and getattr(message, "method", lsp.EXIT) != lsp.EXIT:
                if isinstance(getattr(message, "id", None), (int, str)) and hasattr(message, "params"):
                    # a request after shutdown: the protocol prescribes InvalidRequest
                    send_error_response(self.writer, lsp.ErrorCodes.InvalidRequest.value,
                                        f"Invalid Request: the server is shut down ({message.method})", message.id)
                return  # a notification after shutdown: dropped
            super().handle_message(message)
            return
        raw_id = message.get("id") if isinstance(message, dict) else None
        msg_id = raw_id if isinstance(raw_id, (int, str)) and not isinstance(raw_id, bool) else None
        what = "a JSON object without 'jsonrpc'" if isinstance(message, dict) else f"a JSON {_json_kind(message)}"
        send_error_response(self.writer, lsp.ErrorCodes.InvalidRequest.value,
                            f"Invalid Request: {what}, not a JSON-RPC 2.0 message", msg_id)
        _warn(f"loopc: ignored a protocol message that is {what}, not a JSON-RPC 2.0 message")


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    return "number"


def _warn(line: str) -> None:
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


class LoopcServer(LanguageServer):
    """Server state: negotiated ``encoding``, diagnostics model (``pull``),
    effective :class:`~loopc.lsp.settings.Settings` and one
    :class:`~loopc.lsp.analysis.Analysis` per open document (the latest
    analysed version, plus the latest one whose plan model has every node and
    edge, which completion falls back on while the current text does not
    parse or drops the node being edited)."""

    def __init__(self) -> None:
        super().__init__(SERVER_NAME, __version__, protocol_cls=LoopcProtocol)
        self.encoding = "utf-16"
        self.pull = False
        self.init_options: Any = None
        self.settings = Settings()
        self.analyses: dict[str, Analysis] = {}
        self.last_good: dict[str, Analysis] = {}
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.published: set[str] = set()
        self._results = 0
        self.config_problems_logged: set[str] = set()
        self._since_gc = 0
        self._gc_scheduled = False

    def report_server_error(self, error: Exception, source: Any) -> None:
        """pygls's override point for errors outside a request's own reply.
        A message whose body is not JSON (or nests past the parser's limit,
        or is not UTF-8) gets what JSON-RPC 2.0 prescribes: an error response
        with code -32700 (Parse error) and ``id: null``, since no id can be
        read from it (docs/editors.md#malformed-messages).  Every other error
        keeps pygls's ``window/showMessage``."""
        if source is JsonRpcException and isinstance(error, PARSE_ERRORS):
            send_parse_error(self.protocol.writer, error)
            return
        super().report_server_error(error, source)

    def next_result_id(self) -> str:
        self._results += 1
        return str(self._results)

    # -- analyses ------------------------------------------------------------
    def analysis(self, uri: str) -> Analysis | None:
        """The analysis of the document's current text (re-checked now when
        the cached one is stale); ``None`` for a document that is not open."""
        try:
            doc = self.workspace.get_text_document(uri)
        except Exception:  # noqa: BLE001
            return None
        if uri not in self.workspace.text_documents:
            return None
        a = self.analyses.get(uri)
        if a is not None and a.version == doc.version and a.text == doc.source:
            return a
        return self._analyse(uri, doc.source, doc.version)

    def _analyse(self, uri: str, text: str, version: int | None) -> Analysis:
        a = analyse(uri, text, version, self.encoding, self.settings.severity)
        self.analyses[uri] = a
        self._after_check()
        for p in a.config_problems:
            if p not in self.config_problems_logged:
                self.config_problems_logged.add(p)
                self.window_log_message(lsp.LogMessageParams(
                    type=lsp.MessageType.Warning, message=f"loopc: {p} (the configuration is ignored)"))
        plan = a.plan
        if plan is not None and not plan.malformed_nodes and not plan.malformed_edges:
            self.last_good[uri] = a
        elif not a.active or a.over_budget:
            self.last_good.pop(uri, None)
        return a

    def model(self, uri: str) -> Analysis | None:
        """The current analysis when it has a plan model, else the last one
        that had (positions in it may be stale: callers re-locate by text)."""
        a = self.analysis(uri)
        if a is None or not a.active or a.over_budget:
            return None
        if a.plan is not None:
            return a
        return self.last_good.get(uri)

    # -- memory --------------------------------------------------------------
    def _after_check(self) -> None:
        """Keep the cyclic collector off the keystroke path (the server owns
        its process; the library never touches GC state).  After each check
        the surviving objects are frozen (``gc.freeze``), so automatic
        collections no longer rescan the large, long-lived models of the
        open documents; every :data:`GC_EVERY` checks a full collection runs
        once the event loop is idle, reclaiming what the discarded analyses
        left in cycles, and the survivors are frozen again.  Measured on the
        98-node plan (benchmarks/README.md): p95 of a re-check drops by
        about half; memory stays bounded by ``GC_EVERY`` checks' garbage."""
        import gc

        gc.freeze()
        self._since_gc += 1
        if self._since_gc >= GC_EVERY and not self._gc_scheduled:
            self._gc_scheduled = True
            try:
                asyncio.get_running_loop().call_later(GC_IDLE_DELAY, self._collect)
            except RuntimeError:  # no loop (in-process use): collect now
                self._collect()

    def _collect(self) -> None:
        import gc

        self._gc_scheduled = False
        self._since_gc = 0
        gc.unfreeze()
        gc.collect()
        gc.freeze()

    # -- push diagnostics ------------------------------------------------------
    def publish(self, uri: str) -> None:
        a = self.analysis(uri)
        if a is None:
            return
        if not a.active and uri not in self.published:
            return
        self.published.add(uri)
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=uri, diagnostics=a.diagnostics, version=a.version))

    def schedule(self, uri: str) -> None:
        """Debounced re-check of ``uri`` (push only): cancels the pending run."""
        old = self.pending.pop(uri, None)
        if old is not None:
            old.cancel()
        delay = self.settings.debounce_ms / 1000.0
        self.pending[uri] = asyncio.ensure_future(self._later(uri, delay))

    async def _later(self, uri: str, delay: float) -> None:
        try:
            if delay > 0:
                await asyncio.sleep(delay)
            try:
                version = self.workspace.get_text_document(uri).version
            except Exception:  # noqa: BLE001 - closed meanwhile
                return
            if uri not in self.workspace.text_documents:
                return
            self.publish(uri)
            a = self.analyses.get(uri)
            if a is not None and a.version != version:  # pragma: no cover - single-threaded loop
                return
        except asyncio.CancelledError:
            pass
        except Exception:  # noqa: BLE001
            self.log_error("diagnostics", uri)
        finally:
            t = self.pending.get(uri)
            if t is asyncio.current_task():
                self.pending.pop(uri, None)

    def clear(self, uri: str) -> None:
        old = self.pending.pop(uri, None)
        if old is not None:
            old.cancel()
        self.analyses.pop(uri, None)
        self.last_good.pop(uri, None)
        if not self.pull and uri in self.published:
            self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        self.published.discard(uri)

    # -- settings ------------------------------------------------------------
    async def load_settings(self) -> None:
        raw: Any = self.init_options
        caps = self.client_capabilities
        if caps.workspace is not None and caps.workspace.configuration:
            try:
                got = await asyncio.wait_for(self.workspace_configuration_async(
                    lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section=CONFIG_SECTION)])), 5.0)
                if got and isinstance(got[0], dict):
                    raw = got[0]
            except Exception:  # noqa: BLE001 - client without settings: defaults
                pass
        new = parse_settings(raw)
        if new != self.settings:
            self.settings = new
            self.analyses.clear()
            self.refresh_diagnostics()

    def refresh_diagnostics(self) -> None:
        if self.pull:
            caps = self.client_capabilities
            ws = caps.workspace
            if ws is not None and ws.diagnostics is not None and ws.diagnostics.refresh_support:
                self.workspace_diagnostic_refresh(None)
            return
        for uri in list(self.workspace.text_documents):
            self.schedule(uri)

    def log_error(self, what: str, uri: str | None = None) -> None:
        tb = traceback.format_exc(limit=6)
        msg = f"loopc: {what} failed{' for ' + uri if uri else ''}; please report this\n{tb}"
        log.error(msg)
        try:
            self.window_log_message(lsp.LogMessageParams(type=lsp.MessageType.Error, message=msg))
        except Exception:  # noqa: BLE001
            pass

    def debug_info(self) -> dict[str, Any]:
        import sys

        import pygls

        return {
            "version": __version__,
            "python": sys.version.split()[0],
            "pygls": getattr(pygls, "__version__", None) or _dist_version("pygls"),
            "positionEncoding": self.encoding,
            "diagnostics": "pull" if self.pull else "push",
            "settings": self.settings.to_json(),
            "openDocuments": sorted(self.workspace.text_documents) if self._has_workspace() else [],
        }

    def _has_workspace(self) -> bool:
        try:
            return self.workspace is not None
        except RuntimeError:
            return False


def _dist_version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:  # pragma: no cover
        return None


def guarded(server: LoopcServer, what: str, default: Any = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: a feature that raises answers ``default`` and logs."""
    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        import functools

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except Exception:  # noqa: BLE001 - a feature never takes the server down
                server.log_error(what)
                return default
        return run
    return wrap


def create_server() -> LoopcServer:
    """A new :class:`LoopcServer` with every feature registered."""
    server = LoopcServer()

    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: LoopcServer, params: lsp.InitializedParams) -> None:
        try:
            await ls.load_settings()
        except Exception:  # noqa: BLE001
            ls.log_error("settings")

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: LoopcServer, params: lsp.DidChangeConfigurationParams) -> None:
        try:
            if isinstance(params.settings, dict) and not (
                    ls.client_capabilities.workspace and ls.client_capabilities.workspace.configuration):
                ls.init_options = params.settings
            await ls.load_settings()
        except Exception:  # noqa: BLE001
            ls.log_error("settings")

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: LoopcServer, params: lsp.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        if not ls.pull:
            old = ls.pending.pop(uri, None)
            if old is not None:
                old.cancel()
            try:
                ls.publish(uri)
            except Exception:  # noqa: BLE001
                ls.log_error("diagnostics", uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: LoopcServer, params: lsp.DidChangeTextDocumentParams) -> None:
        if not ls.pull:
            ls.schedule(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: LoopcServer, params: lsp.DidSaveTextDocumentParams) -> None:
        return None

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: LoopcServer, params: lsp.DidCloseTextDocumentParams) -> None:
        try:
            ls.clear(params.text_document.uri)
        except Exception:  # noqa: BLE001
            ls.log_error("close", params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DIAGNOSTIC,
                    lsp.DiagnosticOptions(identifier=SERVER_NAME, inter_file_dependencies=False,
                                          workspace_diagnostics=False))
    def pull_diagnostics(ls: LoopcServer, params: lsp.DocumentDiagnosticParams) -> Any:
        uri = params.text_document.uri
        try:
            a = ls.analysis(uri)
        except Exception:  # noqa: BLE001
            ls.log_error("diagnostics", uri)
            a = None
        items = a.diagnostics if a is not None else []
        rid = a.cached("result_id", ls.next_result_id) if a is not None else "none"
        if params.previous_result_id is not None and params.previous_result_id == rid:
            return lsp.RelatedUnchangedDocumentDiagnosticReport(result_id=rid)
        return lsp.RelatedFullDocumentDiagnosticReport(items=items, result_id=rid)

    @server.command(DEBUG_INFO_COMMAND)
    def debug_info(ls: LoopcServer, *args: Any) -> dict[str, Any]:
        return ls.debug_info()

    from loopc.lsp import features, formatting

    features.register(server)
    formatting.register(server)
    return server


class _ProtocolOut:
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
_HEADER = re.compile(rb"Content-Length:[ \t]*[0-9]+\r\n")


class _ProtocolIn:
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
    * header lines are read in bounded pieces (:data:`MAX_HEADER_LINE`).

    pygls reads through :meth:`readline` and :meth:`read` from one thread at
    a time."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self._buf = bytearray()
        self._eof = False

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
        while True:
            nl = self._buf.find(b"\n", 0, MAX_HEADER_LINE)
            if nl >= 0 or len(self._buf) >= MAX_HEADER_LINE or not self._fill():
                break
        if nl < 0:
            nl = min(len(self._buf), MAX_HEADER_LINE) - 1
        line = bytes(self._buf[: nl + 1])
        m = _HEADER.search(line, 1)
        if m is not None and not line.startswith(b"Content-"):
            line = line[: m.start()]  # the tail of a body framed too short: junk before the header
        del self._buf[: len(line)]
        return line

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


class _MalformedMessages(logging.Filter):
    """pygls logs a traceback for every message it cannot parse (invalid
    JSON, JSON nested past the parser's recursion limit); the session goes
    on, so one line says what was ignored instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str) and record.msg.startswith("Unable to deserialize message"):
            # params that do not fit their method: LoopcProtocol.structure_message
            # answers and writes its own line
            return False
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, PARSE_ERRORS):
            record.msg = "loopc: ignored a malformed protocol message (%s: %s)"
            record.args = (type(exc).__name__, str(exc)[:200])
            record.exc_info = None
            record.exc_text = None
        return True


def serve() -> None:
    """Run the server over stdio until the client says ``exit``.  A
    standard output that cannot be written ends the process with exit
    status 2 and one line on standard error (:class:`_ProtocolOut`)."""
    logging.getLogger("pygls.server").addFilter(_MalformedMessages())
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_MalformedMessages())
    create_server().start_io(_ProtocolIn(sys.stdin.buffer), _ProtocolOut(sys.stdout.buffer))  # type: ignore[arg-type]
