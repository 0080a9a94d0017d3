"""The executor behind ``loopc durable protocol`` (docs/durable.md#protocol):
one DBOS process running one conformance Run as the DBOS workflow
``loopc.durable.protocol_run``.

``python -m loopc.durable.protocol_child DB WORKFLOW [--start]`` launches
DBOS on ``DB`` as executor ``WORKFLOW-exec``; with ``--start`` it starts the
workflow, without it DBOS recovers the executor's pending workflow (the
supervisor relaunches a killed child that way).  It then waits until its
stdin closes or it is killed.

The workflow body is the reference protocol's session
(:class:`loopc.interpreter.protocol.Session`): every protocol request
(``event``, ``report``, ``quit``) arrives as a DBOS message on topic
``ingress``, numbered ``n``, and its reply is published as the DBOS event
``reply:<n>``.  Time is the kit's virtual clock: an ``advance`` carries its
target instant; the wall clock is never read.  Each submission of an effect
to the kit's world is a DBOS step (``loopc.durable.kit_deliver``) whose
world state (answers by key, the submission log) lives in a JSON file, the
world outside the Run; with the ``afterEffectSubmit`` crash point the step
SIGKILLs this process right after the first submission of each key.
Recovery replays the workflow: recorded messages and steps return their
recorded results, so the engine reaches the same state and journal.
"""
from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any

from dbos import DBOS, SetWorkflowID

from loopc.durable import runtime
from loopc.interpreter.host import Engine
from loopc.interpreter.host import ProtocolSession as Session
from loopc.interpreter.host import ProtocolWorld as HostWorld

__all__ = ["protocol_run", "main"]

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
            return "quit"
        else:
            resp = {"error": f"unknown op {op!r}"}
        DBOS.set_event(f"reply:{n}", resp)


def main(argv: list[str]) -> int:
    db, wid = argv[0], argv[1]
    runtime.launch(db, wid + "-exec")
    if "--start" in argv[2:]:
        with SetWorkflowID(wid):
            DBOS.start_workflow(protocol_run, wid)
    sys.stdin.read()  # until the supervisor closes the pipe
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
