"""Effect handlers (docs/durable.md#handlers): the code that performs a
Run's external effects, bound to action types through the capability
catalog's handler bindings (docs/plan.md#catalog-file).

A handler is any object with ``deliver(effect: Effect) -> bool``: ``True``
when the effect was accepted by its receiver, ``False`` when delivery
failed (the engine then applies the node's retry policy).  An exception is
a failed delivery.  A handler may be called more than once for one effect
(at-least-once: the process can die after the handler returned and before
DBOS recorded it); every call carries the same :attr:`Effect.key`, so the
receiver dedupes on it.
"""
from __future__ import annotations

import importlib
import json
import logging
import os
import threading
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Mapping, Protocol

import attrs

__all__ = ["Effect", "Handler", "FileSink", "Webhook", "HANDLERS", "handler_factory", "bind_handlers",
           "BindingError", "FILE_SINK", "WEBHOOK", "ENTRY_POINT_GROUP", "load_handlers", "webhook_url_problem"]

#: The built-in file sink's handler name (also serves the reference bindings).
FILE_SINK = "loopc.durable/file-sink"
#: The built-in webhook's handler name.
WEBHOOK = "loopc.durable/webhook"
#: The entry-point group of installed handlers: ``name = "module:factory"``.
ENTRY_POINT_GROUP = "loopc.durable.handlers"

_log = logging.getLogger("loopc.durable")


@attrs.frozen
class Effect:
    """One delivery of an effect.

    ``key`` the effect identity key ``<run>:<activation>:<attempt>`` (the
    receiver's dedupe key); ``run``, ``act``, ``attempt``, ``node``;
    ``action`` the node's catalog action type (``send_message.callback``,
    ``send_message.sent``, ``request_approval``); ``effect`` the Run-relative effect id
    (``eff_N``); ``ordinal`` the Run-wide delivery number of the node
    (1-based); ``request`` the effect's request as journaled in
    ``effect.reserved``."""

    key: str
    run: str
    act: str
    attempt: int
    node: str
    action: str
    effect: str
    ordinal: int
    request: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "run": self.run, "act": self.act, "attempt": self.attempt, "node": self.node,
                "action": self.action, "effect": self.effect, "ordinal": self.ordinal, "request": dict(self.request)}


class Handler(Protocol):
    """The handler interface: ``deliver(effect) -> bool``."""

    def deliver(self, effect: Effect) -> bool: ...


class FileSink:
    """Appends one JSON line per delivery (:meth:`Effect.to_json`) to
    ``path`` and reports it delivered.  Lines are written whole (one
    ``write`` under a lock, then ``fsync``); a re-delivery after a crash
    appends a second line with the same ``key``."""

    _lock = threading.Lock()

    def __init__(self, path: str) -> None:
        self.path = path

    def deliver(self, effect: Effect) -> bool:
        line = json.dumps(effect.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line.encode("utf-8"))
                os.fsync(fd)
            finally:
                os.close(fd)
        return True


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Refuse every redirect: a 3xx answer is an HTTPError (not delivered)."""

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> None:
        return None


#: How much of a webhook's answer is read (and discarded), in bytes.
WEBHOOK_MAX_ANSWER = 64 * 1024


def webhook_url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a webhook (not ``http://`` or ``https://``
    with a host), or ``None``."""
    try:
        u = urllib.parse.urlsplit(url)
        u.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        return f"the webhook URL {url!r} is not a URL: {exc}"
    if u.scheme not in ("http", "https") or not u.hostname:
        return f"the webhook URL {url!r} must be http:// or https:// with a host"
    return None


class Webhook:
    """POSTs each effect as JSON (:meth:`Effect.to_json`) to ``url``.

    Headers: ``Content-Type: application/json`` and ``Idempotency-Key: <the
    effect identity key>`` — the receiver dedupes re-deliveries on it.
    Delivered when the answer is 2xx within ``timeout`` seconds (connect and
    each read); anything else — another status, a redirect (never
    followed), a refused connection, a timeout — is a failed delivery
    (``False``: the node's retry policy applies).  No proxy from the
    environment is used.  A re-delivery after a crash POSTs again with the
    same key."""

    def __init__(self, url: str, timeout: float = 10.0) -> None:
        why = webhook_url_problem(url)
        if why is not None:
            raise ValueError(why)
        if not timeout > 0:
            raise ValueError(f"the webhook timeout must be > 0 seconds, not {timeout!r}")
        self.url = url
        self.timeout = float(timeout)
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect())

    def deliver(self, effect: Effect) -> bool:
        body = json.dumps(effect.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        req = urllib.request.Request(self.url, data=body, method="POST",
                                     headers={"Content-Type": "application/json", "Idempotency-Key": effect.key})
        try:
            with self._opener.open(req, timeout=self.timeout) as resp:
                resp.read(WEBHOOK_MAX_ANSWER)
                status = int(resp.status)
        except urllib.error.HTTPError as exc:  # a non-2xx answer, a refused redirect included
            _log.warning("webhook %s: effect %s not delivered: HTTP %s", self.url, effect.key, exc.code)
            return False
        except (urllib.error.URLError, OSError, ValueError) as exc:  # refused, reset, timed out, bad answer
            _log.warning("webhook %s: effect %s not delivered: %s", self.url, effect.key, exc)
            return False
        return 200 <= status < 300


HandlerFactory = Callable[[Mapping[str, Any]], Handler]


def _file_sink(options: Mapping[str, Any]) -> Handler:
    return FileSink(str(options["sink"]))


def _webhook(options: Mapping[str, Any]) -> Handler:
    cfg = options.get("webhook")
    if not isinstance(cfg, Mapping) or not cfg.get("url"):
        raise BindingError("the webhook handler needs a URL: start the Run with --webhook URL")
    return Webhook(str(cfg["url"]), float(cfg.get("timeout", 10.0)))


#: Handler name -> factory(options) -> handler.  The reference handlers of
#: the built-in catalog (``loop.reference/<action>``) are served by the file
#: sink.  Register your own before starting a Run or a worker.
HANDLERS: dict[str, HandlerFactory] = {
    FILE_SINK: _file_sink,
    WEBHOOK: _webhook,
    "loop.reference/send_message.callback": _file_sink,
    "loop.reference/send_message.sent": _file_sink,
    "loop.reference/request_approval": _file_sink,
}

#: The catalog's action types whose activations have external effects.
EFFECT_ACTIONS = ("send_message.callback", "send_message.sent", "request_approval")


class BindingError(Exception):
    """An action the plan uses has no executable handler binding, or the
    binding names a handler this process does not have."""


def _entry_points() -> list[Any]:
    from importlib.metadata import entry_points

    return list(entry_points(group=ENTRY_POINT_GROUP))


def _first_line(exc: BaseException) -> str:
    for line in str(exc).splitlines():
        if line.strip():
            return f"{type(exc).__name__}: {line.strip()}"
    return type(exc).__name__


def handler_factory(name: str) -> HandlerFactory:
    """The factory of handler ``name``: registered in :data:`HANDLERS`, else
    an installed entry point of :data:`ENTRY_POINT_GROUP` with that name
    (loaded and registered on first use).  Raises :class:`BindingError` for
    an unknown name or an entry point that cannot be loaded."""
    f = HANDLERS.get(name)
    if f is not None:
        return f
    eps = _entry_points()
    for ep in eps:
        if ep.name == name:
            try:
                got = ep.load()
            except (Exception, SystemExit) as exc:  # noqa: BLE001 - any import failure of a plug-in: one line
                raise BindingError(f"the handler '{name}' (entry point {ep.value}) cannot be loaded: "
                                   f"{_first_line(exc)}") from None
            if not callable(got):
                raise BindingError(f"the handler '{name}' (entry point {ep.value}) is not a factory (options -> handler)")
            HANDLERS[name] = got
            return got
    known = ", ".join(sorted({*HANDLERS, *(ep.name for ep in eps)}))
    raise BindingError(f"no handler named '{name}' is registered in this process (known: {known})")


def load_handlers(spec: str) -> list[str]:
    """Register the handler table ``spec`` = ``MODULE:ATTR`` — ``ATTR`` a
    mapping of handler names to factories (``options -> handler``) — into
    :data:`HANDLERS`; returns the names.  Raises :class:`BindingError` with
    one line for a malformed spec, a module that cannot be imported, a
    missing attribute or a table that is not a mapping of names to
    callables (docs/durable.md#handlers)."""
    mod_name, sep, attr = spec.partition(":")
    if not sep or not mod_name or not attr or not all(p.isidentifier() for p in (*mod_name.split("."), *attr.split("."))):
        raise BindingError(f"--handlers {spec!r}: expected MODULE:ATTR (a module path, a colon, a mapping's name)")
    try:
        obj: Any = importlib.import_module(mod_name)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - any import failure of a plug-in: one line
        raise BindingError(f"--handlers {spec!r}: cannot import {mod_name}: {_first_line(exc)}") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise BindingError(f"--handlers {spec!r}: {mod_name} has no attribute {attr}")
        obj = getattr(obj, part)
    if not isinstance(obj, Mapping) or not obj:
        raise BindingError(f"--handlers {spec!r}: {attr} must be a non-empty mapping of handler names to factories")
    bad = [k for k, v in obj.items() if not isinstance(k, str) or not k or not callable(v)]
    if bad:
        raise BindingError(f"--handlers {spec!r}: entry {bad[0]!r} is not a handler name with a factory (callable)")
    HANDLERS.update(obj)
    return sorted(obj)


def bind_handlers(catalog: Any, actions: list[str]) -> dict[str, str]:
    """``{action: handler name}`` for every effect action in ``actions``,
    from the sealed catalog's handler bindings
    (:class:`loopc.plan.catalog.Catalog`).  Raises :class:`BindingError`
    for a contract-only action or an unregistered handler."""
    out: dict[str, str] = {}
    for action in actions:
        if action not in EFFECT_ACTIONS:
            continue
        entry = catalog.entry(action)
        if entry is None or entry.handler is None:
            raise BindingError(f"the catalog has no handler binding for '{action}' (contract-only); "
                               "add one under 'bindings'")
        handler_factory(entry.handler)
        out[action] = entry.handler
    return out
