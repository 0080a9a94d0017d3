"""``loopc durable protocol --db URL`` (docs/durable.md#protocol): the
conformance protocol (docs/conformance.md#protocol) served by the durable
runtime, so ``loopc conform --runtime "loopc durable protocol --db URL"``
checks it.

This process is the supervisor: it speaks the protocol on stdin/stdout and
never runs the Run itself.  On ``load`` it stores the artifact and the Run
(workflow id: the kit's Run id and a random suffix, so several loads share
one database) and spawns the executor child
(:mod:`loopc.durable.protocol_child`); every later request goes to the
Run's workflow as a DBOS message through a :class:`dbos.DBOSClient`, and
the reply is the workflow's DBOS event for it.  A ``crash`` event is a real
crash: the child is SIGKILLed and a new one started, which recovers the
pending workflow from the database.  When the child dies by itself (the
``afterEffectSubmit`` crash point), the supervisor relaunches it the same
way and keeps waiting for the reply.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import IO, Any

import sqlalchemy as sa

from loopc.interpreter.host import serve_requests

__all__ = ["serve", "Supervisor"]

#: seconds the supervisor waits for one reply of the workflow
REPLY_TIMEOUT = 120.0


class Supervisor:
    """One protocol session: at most one loaded Run and its child process."""

    def __init__(self, db: str) -> None:
        from loopc.durable.store import Store

        self.db = db
        self.store = Store(db)
        self.client: Any = None
        self.child: subprocess.Popen[bytes] | None = None
        self.wid: str | None = None
        self.n = 0
        self.tmp = tempfile.mkdtemp(prefix="loopc-durable-protocol-")

    # ------------------------------------------------------------ the child
    def _spawn(self, start: bool) -> None:
        assert self.wid is not None
        argv = [sys.executable, "-m", "loopc.durable.protocol_child", self.db, self.wid]
        if start:
            argv.append("--start")
        self.child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL)

    def kill(self) -> None:
        if self.child is not None and self.child.poll() is None:
            os.kill(self.child.pid, signal.SIGKILL)
            self.child.wait()
        self.child = None

    def _reply(self, n: int) -> Any:
        """The workflow's reply ``n``; relaunches a child that died."""
        deadline = time.monotonic() + REPLY_TIMEOUT
        while time.monotonic() < deadline:
            try:
                got = self.client.get_event(self.wid, f"reply:{n}", timeout_seconds=0.5)
            except sa.exc.OperationalError:  # the first child has not created DBOS's tables yet
                time.sleep(0.2)
                got = None
            if got is not None:
                return got
            if self.child is not None and self.child.poll() is not None:
                self.child = None
                self._spawn(start=False)
        return {"error": f"the durable Run did not answer within {REPLY_TIMEOUT:g} s"}

    # ------------------------------------------------------------ requests
    def load(self, req: dict[str, Any]) -> Any:
        from dbos import DBOSClient, DBOSPortableJSONSerializer

        from loopc.interpreter.host import PROTOCOL_VERSION, program_from_artifact

        if req.get("protocol", 1) != PROTOCOL_VERSION:
            return {"ok": False, "error": f"protocol version {json.dumps(req.get('protocol', 1))} is not "
                                          f"supported (this runtime speaks {PROTOCOL_VERSION})"}
        raw = req.get("artifact")
        if not isinstance(raw, str):
            return {"ok": False, "error": "load needs 'artifact' (the artifact text)"}
        prog, why = program_from_artifact(raw.encode("utf-8"))
        if prog is None:
            return {"ok": False, "error": f"artifact refused: {why}"}
        run = req.get("run")
        self.kill()
        self.wid = f"{run if isinstance(run, str) and run else 'run'}-{secrets.token_hex(4)}"
        self.n = 0
        world = os.path.join(self.tmp, self.wid + ".world.json")
        self.store.put_artifact(prog.digest, raw)
        self.store.create_run(self.wid, prog.digest, req.get("input") or {}, str(req.get("start", "")),
                              {"protocol": {"load": req, "world": world}})
        if self.client is None:
            self.client = DBOSClient(system_database_url=self.store.url, serializer=DBOSPortableJSONSerializer())
        self._spawn(start=True)
        return self._reply(0)

    def ask(self, req: dict[str, Any]) -> Any:
        if self.wid is None:
            return {"applied": False, "reason": "no Run loaded"} if req.get("op") == "event" else {"status": None}
        ev = req.get("event")
        if req.get("op") == "event" and isinstance(ev, dict) and list(ev) == ["crash"]:
            self.kill()
            self._spawn(start=False)
            return {"applied": True, "reason": None}
        self.n += 1
        mid = f"{self.wid}:{self.n}"
        self.client.send(self.wid, {"n": self.n, "req": req}, topic="ingress", idempotency_key=mid)
        return self._reply(self.n)

    def close(self) -> None:
        if self.wid is not None and self.child is not None and self.child.poll() is None:
            self.n += 1
            try:
                self.client.send(self.wid, {"n": self.n, "req": {"op": "quit"}}, topic="ingress")
                self.client.get_event(self.wid, f"reply:{self.n}", timeout_seconds=5)
            except Exception:  # noqa: BLE001,S110 - closing down
                pass
        self.kill()
        if self.client is not None:
            self.client.destroy()
        shutil.rmtree(self.tmp, ignore_errors=True)


def serve(stdin: IO[str], stdout: IO[str], db: str) -> int:
    """Serve protocol requests until ``quit`` or end of input; a bad request
    gets ``{"error": ...}``, never a traceback."""
    sup = Supervisor(db)

    def answer(op: Any, req: dict[str, Any]) -> dict[str, Any]:
        if op == "load":
            return sup.load(req)
        if op in ("event", "report"):
            return sup.ask(req)
        return {"error": f"unknown op {op!r}"}

    try:
        return serve_requests(stdin, stdout, answer)
    finally:
        sup.close()
    return 0
