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

import json
import os
import threading
from typing import Any, Callable, Mapping, Protocol

import attrs

__all__ = ["Effect", "Handler", "FileSink", "HANDLERS", "handler_factory", "bind_handlers", "BindingError",
           "FILE_SINK"]

#: The built-in file sink's handler name (also serves the reference bindings).
FILE_SINK = "loopc.durable/file-sink"


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


HandlerFactory = Callable[[Mapping[str, Any]], Handler]


def _file_sink(options: Mapping[str, Any]) -> Handler:
    return FileSink(str(options["sink"]))


#: Handler name -> factory(options) -> handler.  The reference handlers of
#: the built-in catalog (``loop.reference/<action>``) are served by the file
#: sink.  Register your own before starting a Run or a worker.
HANDLERS: dict[str, HandlerFactory] = {
    FILE_SINK: _file_sink,
    "loop.reference/send_message.callback": _file_sink,
    "loop.reference/send_message.sent": _file_sink,
    "loop.reference/request_approval": _file_sink,
}

#: The catalog's action types whose activations have external effects.
EFFECT_ACTIONS = ("send_message.callback", "send_message.sent", "request_approval")


class BindingError(Exception):
    """An action the plan uses has no executable handler binding, or the
    binding names a handler this process does not have."""


def handler_factory(name: str) -> HandlerFactory:
    """The registered factory of handler ``name``; raises :class:`BindingError`."""
    f = HANDLERS.get(name)
    if f is None:
        known = ", ".join(sorted(HANDLERS))
        raise BindingError(f"no handler named '{name}' is registered in this process (known: {known})")
    return f


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
