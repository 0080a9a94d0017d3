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
import concurrent.futures
import functools
import logging
import sys
import time
import traceback
from typing import Any, Callable
from urllib.parse import unquote

import attrs
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from loopc import __version__
from loopc.lsp.analysis import Analysis, analyse, config_current
from loopc.lsp.positions import choose_encoding
from loopc.lsp.settings import Settings, parse_settings
from loopc.lsp.transport import (
    PARSE_ERRORS,
    ProtocolIn,
    ProtocolOut,
    send_error_response,
    send_message,
    send_parse_error,
)

log = logging.getLogger("loopc.lsp")

SERVER_NAME = "loopc"
CONFIG_SECTION = "loopc"
DEBUG_INFO_COMMAND = "loopc.debugInfo"
#: Worker threads that run checks (docs/editors.md#never-blocked): two, so a
#: small document is checked while a big one is; at most one check per
#: document runs at a time.
CHECK_WORKERS = 2
#: Seconds a check worker may hold the interpreter lock while the message
#: loop waits for it (``sys.setswitchinterval``; Python's default is 0.005).
SWITCH_INTERVAL = 0.001
#: Checks between two full garbage collections (see LoopcServer._after_check).
GC_EVERY = 32
GC_IDLE_DELAY = 0.3


#: What :meth:`LoopcProtocol.structure_message` returns for a request it
#: has already answered with an error: :meth:`LoopcProtocol.handle_message`
#: drops it.
_ANSWERED = object()


class LoopcProtocol(LanguageServerProtocol):
    """pygls protocol with loopc's negotiation: UTF-8 positions where the
    client offers them (pygls alone takes the client's first preference), the
    ``positionEncoding`` of ``initializationOptions`` where it offers none, and
    ``diagnosticProvider`` only for clients that pull diagnostics."""

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(self, params: lsp.InitializeParams) -> Any:
        server: LoopcServer = self._server  # type: ignore[assignment]
        caps = params.capabilities
        offered = None
        if caps.general is not None and caps.general.position_encodings is not None:
            offered = [str(getattr(e, "value", e)) for e in caps.general.position_encodings]
        encoding = choose_encoding(offered)
        forced = parse_settings(params.initialization_options).position_encoding
        if not offered and forced is not None:
            # the client negotiated nothing: the positionEncoding setting decides (docs/editors.md#settings)
            encoding = forced
        server.encoding = encoding
        server.pull = caps.text_document is not None and caps.text_document.diagnostic is not None
        server.init_options = params.initialization_options
        server.start_lifeline(params.process_id)
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

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: lsp.DidChangeTextDocumentParams) -> Any:
        """pygls's ``didChange`` for an open document; one for a document
        that is not open (a client bug, or a change racing a close) is
        ignored with a warning in the log, not a server error shown to the
        user."""
        uri = params.text_document.uri
        if self._workspace is None or unquote(uri) not in self._workspace.text_documents:
            log.warning("loopc: ignored a change of %s, which is not open", uri)
            return None
        return (yield from super().lsp_text_document__did_change(params))

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
            if self.get_message_type(method) is None and method not in self.fm.features:
                # a method the server does not know: a notification is ignored, a request
                # answered -32601 Method not found — whatever its params (docs/editors.md#logs)
                log.debug("ignored unknown method %r", method)
                if "id" in data:
                    msg_id = raw_id if isinstance(raw_id, (int, str)) and not isinstance(raw_id, bool) else None
                    send_error_response(self.writer, lsp.ErrorCodes.MethodNotFound.value,
                                        f"Method not found: {method}", msg_id)
                return _ANSWERED
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
        #: the settings/configuration generation: bumped by :meth:`invalidate`
        #: whenever the settings or the project configuration change
        self.generation = 0
        #: the generation each stored analysis was computed under
        self.analysis_generation: dict[str, int] = {}
        self.last_good: dict[str, Analysis] = {}
        self.pending: dict[str, asyncio.Task[None]] = {}
        #: the check of each document in flight (at most one per document)
        self.inflight: dict[str, asyncio.Task[Analysis | None]] = {}
        #: how long each document's last check took, in milliseconds
        self.check_ms: dict[str, float] = {}
        #: each open document's incremental checker (docs/editors.md#incremental-re-check)
        self.checkers: dict[str, Any] = {}
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.loop_thread: int | None = None
        self._lifeline: asyncio.Future[None] | None = None
        self.published: set[str] = set()
        self._results = 0
        self.config_problems_logged: set[str] = set()
        self._since_gc = 0
        self._gc_scheduled = False
        self._encoding_warned: set[str] = set()

    # -- lifetime --------------------------------------------------------------
    def start_lifeline(self, pid: Any) -> None:
        """Remember the message loop (its thread is the only one that
        writes to the client) and, when ``initialize`` names the client's
        process (``pid``, an int > 0), watch it: once it is gone the server
        exits with status 1, as after ``exit`` without ``shutdown``
        (docs/editors.md#lifetime)."""
        import os
        import threading

        from loopc.lsp import lifeline

        try:
            self.loop = asyncio.get_running_loop()
        except RuntimeError:  # in-process use without a loop: nothing to watch with
            return
        self.loop_thread = threading.get_ident()
        if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0 and pid != os.getpid():
            self._lifeline = asyncio.ensure_future(lifeline.watch(pid, functools.partial(self._client_died, pid)))

    def _client_died(self, pid: int) -> None:
        import os

        log.info("loopc: the client process %d is gone; exiting", pid)
        for h in logging.getLogger("loopc").handlers:
            try:
                h.flush()
            except Exception:  # noqa: BLE001
                pass
        os._exit(1)

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
    @property
    def executor(self) -> concurrent.futures.ThreadPoolExecutor:
        """The check workers (:data:`CHECK_WORKERS` threads, created on first
        use)."""
        if self._executor is None:
            self._executor = concurrent.futures.ThreadPoolExecutor(
                max_workers=CHECK_WORKERS, thread_name_prefix="loopc-check")
        return self._executor

    def _open_doc(self, uri: str) -> Any:
        if not self._has_workspace() or unquote(uri) not in self.workspace.text_documents:
            return None  # (pygls keys documents by the percent-decoded URI)
        try:
            return self.workspace.get_text_document(uri)
        except Exception:  # noqa: BLE001
            return None

    def fresh(self, uri: str) -> Analysis | None:
        """The cached analysis when it is of the document's current text,
        else ``None`` (never checks)."""
        doc = self._open_doc(uri)
        a = self.analyses.get(uri)
        if doc is None or a is None or a.version != doc.version or a.text != doc.source:
            return None
        if self.analysis_generation.get(uri) != self.generation:  # computed under older settings
            return None
        if not config_current(a):  # its configuration files changed (docs/editors.md#live-configuration)
            return None
        return a

    async def current(self, uri: str) -> Analysis | None:
        """The analysis of the document's current text, checked off the
        message loop when the cached one is stale (docs/editors.md#never-blocked):
        at most one check per document runs at a time, in a worker thread;
        when the text changes while it runs, its result is dropped and the
        newest text is checked next, so the newest version always wins.
        A check that ran while the settings or the configuration changed
        (:meth:`invalidate`) is dropped the same way and re-run under the
        new ones.  ``None`` for a document that is not open.  Cancelling the awaiting
        request (``$/cancelRequest``) leaves the check running for the
        others that wait on it."""
        while True:
            doc = self._open_doc(uri)
            if doc is None:
                return None
            a = self.fresh(uri)
            if a is not None:
                return a
            task = self.inflight.get(uri)
            if task is None or task.done():
                task = asyncio.ensure_future(self._check(uri, doc.source, doc.version))
                self.inflight[uri] = task
            await asyncio.shield(task)

    async def _check(self, uri: str, text: str, version: int | None) -> Analysis | None:
        loop = asyncio.get_running_loop()
        t0 = time.perf_counter()
        generation = self.generation  # the settings read below belong to it
        try:
            a = await loop.run_in_executor(self.executor, functools.partial(
                analyse, uri, text, version, self.encoding, self.settings.severity, checker=self.checker(uri)))
        except Exception:  # noqa: BLE001 - analyse never raises; a worker that cannot start
            self.log_error("check", uri)
            return None
        finally:
            self.check_ms[uri] = (time.perf_counter() - t0) * 1000
        doc = self._open_doc(uri)
        if doc is None or doc.version != version or doc.source != text:
            log.debug("dropped the stale check of %s version %s", uri, version)
            return None
        if generation != self.generation:
            log.debug("dropped the check of %s version %s: the settings changed while it ran", uri, version)
            return None
        self._store(a, generation)
        return a

    def analysis(self, uri: str) -> Analysis | None:
        """The analysis of the document's current text; when the cached one
        is stale the check runs here, on the caller's thread (in-process use
        and tests: the message loop awaits :meth:`current` instead).
        ``None`` for a document that is not open."""
        doc = self._open_doc(uri)
        if doc is None:
            return None
        a = self.fresh(uri)
        if a is not None:
            return a
        a = analyse(uri, doc.source, doc.version, self.encoding, self.settings.severity,
                    checker=self.checker(uri))
        self._store(a, self.generation)
        return a

    def checker(self, uri: str) -> Any:
        """The document's :class:`~loopc.pipeline.incremental.IncrementalChecker`
        (made on first use), or ``None`` when the ``incremental`` setting is
        off (docs/editors.md#incremental-re-check)."""
        if not self.settings.incremental:
            self.checkers.pop(uri, None)
            return None
        c = self.checkers.get(uri)
        if c is None:
            from loopc.pipeline.incremental import IncrementalChecker

            c = self.checkers[uri] = IncrementalChecker()
        return c

    def _store(self, a: Analysis, generation: int) -> None:
        """Cache ``a`` as the document's analysis, computed under the
        settings/configuration ``generation``."""
        uri = a.uri
        self.analyses[uri] = a
        self.analysis_generation[uri] = generation
        self._after_check()
        for p in a.config_problems:
            if p not in self.config_problems_logged:
                self.config_problems_logged.add(p)
                log.warning("loopc: %s (the configuration is ignored)", p)
        plan = a.plan
        if plan is not None and not plan.malformed_nodes and not plan.malformed_edges:
            self.last_good[uri] = a
        elif not a.active or a.over_budget:
            self.last_good.pop(uri, None)

    async def current_active(self, uri: str) -> Analysis | None:
        """:meth:`current` when the document is an analysed plan (a plan
        within the source budget), else ``None``."""
        a = await self.current(uri)
        return a if a is not None and a.active and not a.over_budget else None

    def document_feature(self, method: str, options: Any = None, *, what: str, default: Any = None,
                         uri_of: Callable[[Any], str] | None = None) -> Callable[[Callable[..., Any]], Any]:
        """Register ``fn(ls, a, params)`` as the handler of the document
        request ``method`` (with ``options``, as ``feature``): the handler
        awaits the current analysis of the document (``params.text_document.uri``,
        or ``uri_of(params)``) off the message loop and calls ``fn`` with it
        when it is an analysed plan, else answers ``default``.  ``fn``
        raising a ``JsonRpcException`` (e.g. :class:`Refused`) answers that
        error, quietly; any other exception answers ``default`` and logs
        ``what`` failed (``window/logMessage``).  Returns ``fn``."""
        get_uri = uri_of or (lambda p: p.text_document.uri)

        def wrap(fn: Callable[..., Any]) -> Any:
            async def handler(ls: LoopcServer, params: Any) -> Any:
                try:
                    uri = get_uri(params)
                    a = await ls.current_active(uri)
                    if a is None:
                        return default
                    return fn(ls, a, params)
                except JsonRpcException:
                    raise
                except Exception:  # noqa: BLE001 - a feature never takes the server down
                    ls.log_error(what)
                    return default

            handler.__name__ = getattr(fn, "__name__", what)
            self.feature(method, options)(handler)
            return fn
        return wrap

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
    def publish(self, a: Analysis) -> None:
        uri = a.uri
        if not a.active and uri not in self.published:
            return
        self.published.add(uri)
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=uri, diagnostics=a.diagnostics, version=a.version))

    def schedule(self, uri: str, delay_ms: float | None = None) -> None:
        """Debounced re-check of ``uri`` (push only): cancels the pending
        run; waits ``delay_ms``, by default the ``debounce`` setting or the
        adaptive debounce (:meth:`Settings.debounce_for`)."""
        old = self.pending.pop(uri, None)
        if old is not None:
            old.cancel()
        if delay_ms is None:
            delay_ms = self.settings.debounce_for(self.check_ms.get(uri))
        self.pending[uri] = asyncio.ensure_future(self._later(uri, delay_ms / 1000.0))

    async def _later(self, uri: str, delay: float) -> None:
        try:
            if delay > 0:
                await asyncio.sleep(delay)
            a = await self.current(uri)
            if a is not None and a is self.fresh(uri):  # a newer edit meanwhile: its own run publishes
                self.publish(a)
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
        self.analysis_generation.pop(uri, None)
        self.last_good.pop(uri, None)
        self.inflight.pop(uri, None)
        self.check_ms.pop(uri, None)
        self.checkers.pop(uri, None)
        if not self.pull and uri in self.published:
            self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        self.published.discard(uri)

    # -- settings ------------------------------------------------------------
    def invalidate(self) -> None:
        """The settings or the project configuration changed: start a new
        generation and forget every cached analysis.  A check still running
        under the old generation is dropped when it ends (:meth:`_check`),
        so neither a push nor a pull ever delivers it."""
        self.generation += 1
        self.analyses.clear()
        self.analysis_generation.clear()

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
        if new.position_encoding not in (None, self.encoding) and new.position_encoding not in self._encoding_warned:
            self._encoding_warned.add(new.position_encoding)
            log.warning("loopc: positionEncoding %r is not applied: the server answers in %s, fixed at "
                        "initialize; give the setting in initializationOptions (a client that offers "
                        "position encodings negotiates one instead)", new.position_encoding, self.encoding)
        if new != self.settings:
            self.settings = new
            self.invalidate()
            self.refresh_diagnostics()

    def refresh_diagnostics(self) -> None:
        if self.pull:
            caps = self.client_capabilities
            ws = caps.workspace
            if ws is not None and ws.diagnostics is not None and ws.diagnostics.refresh_support:
                self.workspace_diagnostic_refresh(None)
            return
        for doc in list(self.workspace.text_documents.values()):
            self.schedule(doc.uri)

    def supports(self, path: str) -> bool:
        """Whether the client's capability at the dotted attribute ``path``
        of ``ClientCapabilities`` (``"workspace.workspace_edit.document_changes"``)
        is true."""
        cur: Any = self.client_capabilities if self._has_workspace() else None
        for part in path.split("."):
            cur = getattr(cur, part, None)
            if cur is None:
                return False
        return cur is True

    def log_error(self, what: str, uri: str | None = None) -> None:
        tb = traceback.format_exc(limit=6)
        log.error("loopc: %s failed%s; please report this\n%s", what, " for " + uri if uri else "", tb)

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
    from loopc.lsp import liveconfig

    server = LoopcServer()

    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: LoopcServer, params: lsp.InitializedParams) -> None:
        try:
            await ls.load_settings()
        except Exception:  # noqa: BLE001
            ls.log_error("settings")
        await liveconfig.watch_config_files(ls)

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
        if not ls.pull:
            ls.schedule(params.text_document.uri, 0)

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
    async def pull_diagnostics(ls: LoopcServer, params: lsp.DocumentDiagnosticParams) -> Any:
        uri = params.text_document.uri
        try:
            a = await ls.current(uri)
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
    liveconfig.register(server)
    return server


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
            _warn(f"loopc: ignored a malformed protocol message ({type(exc).__name__}: {str(exc)[:200]})")
            return False
        return True


def serve(*, log_file: str | None = None, verbose: bool = False) -> None:
    """Run the server over stdio until the client says ``exit`` (or its
    process dies).  Logs as :mod:`loopc.lsp.logs` says (``log_file``,
    ``verbose``: ``loopc lsp --log-file PATH --verbose``).  A standard
    output that cannot be written ends the process with exit status 2 and
    one line on standard error (:class:`ProtocolOut`)."""
    from loopc.lsp import logs

    logging.getLogger("pygls.server").addFilter(_MalformedMessages())
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_MalformedMessages())
    server = create_server()
    logs.configure(server, log_file=log_file, verbose=verbose)
    # the message loop takes the interpreter lock back from a check worker
    # within 1 ms instead of 5 (docs/editors.md#never-blocked)
    sys.setswitchinterval(SWITCH_INTERVAL)
    server.start_io(ProtocolIn(sys.stdin.buffer), ProtocolOut(sys.stdout.buffer))  # type: ignore[arg-type]
