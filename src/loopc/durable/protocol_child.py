"""The executor behind ``loopc durable protocol`` (docs/durable.md#protocol):
one DBOS process running the session's conformance Runs, each as the DBOS
workflow ``loopc.durable.protocol_run``.

The supervisor starts it as a process (:func:`serve_executor`, forked from a
fork server that has imported this module once); it launches DBOS as the
session's executor and dequeues the session's workflows from the session's
DBOS queue, the only queue it listens to.  A new executor of the session
(after the supervisor SIGKILLed the previous one, or after it killed
itself at the ``afterEffectSubmit`` crash point) finds the Run's workflow
pending under the executor id, and DBOS recovery puts it back on that
queue: it replays from the database.

The workflow body is the reference protocol's session
(:class:`loopc.interpreter.protocol.Session`): every protocol request
(``event``, ``report``, ``quit``) arrives as a DBOS message on topic
``ingress``, numbered ``n``, and its reply is published as the DBOS event
``reply:<n>`` (then the supervisor is woken through a pipe; it reads the
reply from the database).  Time is the kit's virtual clock: an ``advance``
carries its target instant; the wall clock is never read.  Each submission
of an effect to the kit's world is a DBOS step (``loopc.durable.kit_deliver``)
whose world state (answers by key, the submission log) lives in a JSON
file, the world outside the Run; with the ``afterEffectSubmit`` crash point
the step SIGKILLs this process right after the first submission of each
key.  Recovery replays the workflow: recorded messages and steps return
their recorded results, so the engine reaches the same state and journal.
"""
from __future__ import annotations

import json
import multiprocessing
import os
import signal
import threading
from typing import Any

from dbos import DBOS

from loopc.durable import runtime
from loopc.interpreter.host import Engine
from loopc.interpreter.host import ProtocolSession as Session
from loopc.interpreter.host import ProtocolWorld as HostWorld

__all__ = ["protocol_run", "serve_executor"]

IDLE_SECONDS = 86_400.0


def _read_world(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            return dict(json.load(f))
    except FileNotFoundError:
        return {"answers": {}, "log": [], "crashed": {}}


def _write_world(path: str, world: dict[str, Any]) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(world, f, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


@DBOS.step(name="loopc.durable.kit_deliver")
def _kit_deliver(path: str, faults: dict[str, Any], crash: bool, node: str, ordinal: int, effect: str,
                 key: str) -> bool:
    """One submission to the kit's world (a key already answered gets the
    same answer); may SIGKILL the process (the crash point)."""
    world = _read_world(path)
    ok = world["answers"].get(key) if key else None
    if ok is None:
        ok = ordinal > int((faults.get("deliveries") or {}).get(node, 0))
        if key:
            world["answers"][key] = ok
    world["log"].append({"effect": effect, "key": key})
    die = crash and key not in world["crashed"]
    if die:
        world["crashed"][key] = True
    _write_world(path, world)
    if die:
        os.kill(os.getpid(), signal.SIGKILL)
    return bool(ok)


class _KitWorld(HostWorld):
    def __init__(self, path: str, faults: dict[str, Any], crash: bool) -> None:
        super().__init__(faults.get("deliveries") or {}, faults.get("transport") or {})
        self.path = path
        self.faults = faults
        self.crash = crash

    def deliver(self, node: str, ordinal: int, effect: str, key: str = "") -> bool:
        return _kit_deliver(self.path, self.faults, self.crash, node, ordinal, effect, key)

    @property
    def log(self) -> list[dict[str, str]]:
        return list(_read_world(self.path)["log"])

    @log.setter
    def log(self, value: list[dict[str, str]]) -> None:
        pass  # the log lives in the world file


class _DurableSession(Session):
    def __init__(self, world: _KitWorld) -> None:
        super().__init__(Engine)
        self.kit_world = world

    def _make_world(self, faults: Any, crashes: list[str]) -> HostWorld:
        return self.kit_world


@DBOS.workflow(name="loopc.durable.protocol_run")
def protocol_run(wid: str) -> str:
    """One conformance Run (see the module docstring)."""
    meta = runtime._st().run(wid)
    if meta is None:
        raise runtime.DurableError(f"no Run {wid}")
    kit = meta["bindings"]["protocol"]
    load = dict(kit["load"])
    world = _KitWorld(kit["world"], load.get("faults") or {}, "afterEffectSubmit" in (load.get("crashes") or []))
    sess = _DurableSession(world)
    DBOS.set_event("reply:0", sess.load(load))
    _replied(0)
    while True:
        msg = DBOS.recv("ingress", timeout_seconds=IDLE_SECONDS)
        if not isinstance(msg, dict):
            continue
        n, req = msg["n"], msg["req"]
        op = req.get("op")
        if op == "event":
            resp = sess.event(req)
        elif op == "report":
            resp = sess.report()
        elif op == "quit":
            DBOS.set_event(f"reply:{n}", {"ok": True})
            _replied(n)
            return "quit"
        else:
            resp = {"error": f"unknown op {op!r}"}
        DBOS.set_event(f"reply:{n}", resp)
        _replied(n)


_wake: Any = None
_wake_lock = threading.Lock()


def _replied(n: int) -> None:
    """Tell the supervisor that reply ``n`` is in the database (a wake-up
    only: the supervisor reads the reply with ``get_event``; a repeated or
    lost wake-up is harmless)."""
    if _wake is None:
        return
    with _wake_lock:
        try:
            _wake.send(n)
        except OSError:  # the supervisor is gone
            pass


def serve_executor(db: str, executor: str, queue: str, wake: Any) -> None:
    """The executor process (started by the supervisor, see the module
    docstring): launch DBOS on ``db`` as executor ``executor``, dequeuing
    from the DBOS queue ``queue`` only; send ``-1`` on the pipe end ``wake``
    once launched and ``n`` whenever the workflow has published reply
    ``n``; run workflows until the process is killed or the supervisor
    process ends.  Standard streams go to /dev/null (the supervisor's stdout
    is the protocol)."""
    global _wake
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    _wake = wake
    runtime.launch(db, executor, queues=[queue])
    DBOS.register_queue(queue, polling_interval_sec=runtime.poll_interval())
    _replied(-1)
    parent = multiprocessing.parent_process()
    if parent is not None:
        parent.join()  # returns when the supervisor process is gone
    else:  # pragma: no cover - always started by the supervisor
        threading.Event().wait()
    os._exit(0)
