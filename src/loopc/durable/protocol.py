"""``loopc durable protocol --db URL`` (docs/durable.md#protocol): the
conformance protocol (docs/conformance.md#protocol) served by the durable
runtime, so ``loopc conform --runtime "loopc durable protocol --db URL"``
checks it.

This process is the supervisor: it speaks the protocol on stdin/stdout and
never runs a Run itself.  It owns one executor process
(:func:`loopc.durable.protocol_child.serve_executor`) for the whole
session, DBOS executor ``loopc-protocol-<session>``, which dequeues from
the DBOS queue of the same name only.  On ``load`` it ends the previous
Run's workflow (``quit``), stores the artifact and the Run (workflow id:
the kit's Run id and a random suffix, so several loads share one database)
and enqueues the Run's workflow; every later request goes to the workflow
as a DBOS message through a :class:`dbos.DBOSClient`, and the reply is the
workflow's DBOS event for it.  A ``crash`` event is a real crash: the
executor is SIGKILLed and a new one started, which recovers the pending
workflow from the database.  When the executor dies by itself (the
``afterEffectSubmit`` crash point), the supervisor starts a new one the
same way and keeps waiting for the reply.

Executors are forked from a ``multiprocessing`` fork server that imported
DBOS and loopc once, so a relaunch costs a DBOS launch and the recovery,
not an interpreter start.
"""
from __future__ import annotations

import json
import multiprocessing
import os
import secrets
import shutil
import signal
import tempfile
import time
from multiprocessing.connection import wait
from typing import IO, Any

from loopc.interpreter.host import serve_requests

__all__ = ["serve", "Supervisor"]

#: seconds the supervisor waits for one reply of the workflow
REPLY_TIMEOUT = 120.0
#: the modules a forked executor finds imported (the fork server imports them
#: once): the executor, and what verifying an artifact imports on first use
_PRELOAD = ["loopc.durable.protocol_child", "loopc.ir.decoder", "loopc.ir.digest", "loopc.ir.verifier", "networkx"]


def _context() -> Any:
    """The multiprocessing context executors start from: a fork server that
    has imported DBOS and loopc once (``forkserver``, where the platform has
    it), else a fresh interpreter per executor (``spawn``)."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(_PRELOAD)
        return ctx
    return multiprocessing.get_context("spawn")


class Supervisor:
    """One protocol session: its loaded Run and the executor process."""

    def __init__(self, db: str) -> None:
        from loopc.durable.store import Store

        self.db = db
        self.store = Store(db)
        self.session = secrets.token_hex(6)
        self.executor = f"loopc-protocol-{self.session}"  # DBOS executor id, and its queue's name
        self.client: Any = None
        self.ctx: Any = None
        self.child: Any = None
        self.launches = 0
        self.wid: str | None = None
        self.n = 0
        self.tmp = tempfile.mkdtemp(prefix="loopc-durable-protocol-")

    # ------------------------------------------------------------ the child
    def _spawn(self) -> None:
        """Start an executor process; it recovers the session's pending
        workflows from the database (DBOS recovery, executor
        :attr:`executor`)."""
        from loopc.durable.protocol_child import serve_executor

        if self.ctx is None:
            self.ctx = _context()
        wake_r, wake_w = self.ctx.Pipe(duplex=False)
        self.child = self.ctx.Process(target=serve_executor, args=(self.db, self.executor, self.executor, wake_w),
                                      name=self.executor, daemon=True)
        self.child.start()
        wake_w.close()
        self.launches += 1
        self.wake = wake_r

    def _wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for a wake-up from the executor; a dead
        executor is relaunched (after reaping it).  True when it said
        something (or died), so the caller looks at the database again."""
        ready = wait([self.wake, self.child.sentinel], timeout)
        if self.wake in ready:
            try:
                while self.wake.poll():
                    self.wake.recv()
            except (EOFError, OSError):  # the executor died: its sentinel says so too
                pass
        if not self.child.is_alive():
            self.kill()
            self._spawn()
            return True
        return bool(ready)

    def kill(self) -> None:
        """SIGKILL the executor process and reap it."""
        if self.child is not None:
            if self.child.is_alive():
                os.kill(self.child.pid, signal.SIGKILL)
            self.child.join()
            self.child.close()
            self.wake.close()
        self.child = None

    def _reply(self, n: int, timeout: float = REPLY_TIMEOUT) -> Any:
        """The workflow's reply ``n``; relaunches an executor that died.
        The reply is read from the database (``get_event``) whenever the
        executor wakes the supervisor, and at least every second."""
        deadline = time.monotonic() + timeout
        while True:
            got = self.client.get_event(self.wid, f"reply:{n}", timeout_seconds=0)
            if got is not None:
                return got
            left = deadline - time.monotonic()
            if left <= 0:
                return {"error": f"the durable Run did not answer within {timeout:g} s"}
            self._wait(min(left, 1.0))

    def _first_launch(self) -> tuple[bool, str | None]:
        """Start an executor and wait until it has launched DBOS (which
        creates DBOS's tables: the client needs them): ``(exited, error
        text)``, the error ``None`` once it has launched."""
        self._spawn()
        deadline = time.monotonic() + REPLY_TIMEOUT
        while True:
            try:
                if self.wake.poll(min(1.0, max(0.0, deadline - time.monotonic()))):
                    self.wake.recv()
                    break
            except (EOFError, OSError):  # it died
                self.child.join(5)
            if not self.child.is_alive() or time.monotonic() > deadline:
                code = self.child.exitcode
                self.kill()
                return (True, f"the durable executor exited with code {code} before it launched DBOS") if code is not None \
                    else (False, f"the durable executor did not launch DBOS within {REPLY_TIMEOUT:g} s")
        return False, None

    def _connect(self) -> str | None:
        """Start the first executor (it creates DBOS's tables and the
        session's queue) and the client; an error text if that fails."""
        from dbos import DBOSClient, DBOSPortableJSONSerializer

        from loopc.durable.runtime import APP_NAME

        for _attempt in range(3):  # a first launch can lose a race with another session creating the tables
            exited, why = self._first_launch()
            if not exited:
                break
        if why is not None:
            return why
        self.client = DBOSClient(system_database_url=self.store.url, serializer=DBOSPortableJSONSerializer(),
                                 application_name=APP_NAME)
        return None

    def _finish(self, timeout: float = REPLY_TIMEOUT) -> None:
        """End the loaded Run's workflow: a ``quit`` message, its reply, and
        DBOS recording the workflow's end (which follows the reply), so that
        a later crash recovers the next Run's workflow only."""
        from loopc.durable.runtime import poll_interval

        if self.wid is None or self.client is None:
            return
        wid = self.wid
        self.n += 1
        deadline = time.monotonic() + timeout
        self.client.send(wid, {"n": self.n, "req": {"op": "quit"}}, topic="ingress", idempotency_key=f"{wid}:{self.n}")
        self._reply(self.n, timeout)
        self.wid = None
        handle = self.client.retrieve_workflow(wid)
        while handle.get_status().status in ("PENDING", "ENQUEUED") and time.monotonic() < deadline:
            self._wait(poll_interval())

    # ------------------------------------------------------------ requests
    def load(self, req: dict[str, Any]) -> Any:
        from loopc.durable.runtime import APP_VERSION
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
        if self.client is None:
            why = self._connect()
            if why is not None:
                return {"ok": False, "error": why}
        self._finish()
        run = req.get("run")
        self.wid = f"{run if isinstance(run, str) and run else 'run'}-{secrets.token_hex(4)}"
        self.n = 0
        world = os.path.join(self.tmp, self.wid + ".world.json")
        self.store.put_artifact(prog.digest, raw)
        self.store.create_run(self.wid, prog.digest, req.get("input") or {}, str(req.get("start", "")),
                              {"protocol": {"load": req, "world": world}})
        self.client.enqueue({"queue_name": self.executor, "workflow_name": "loopc.durable.protocol_run",
                             "workflow_id": self.wid, "app_version": APP_VERSION}, self.wid)
        return self._reply(0)

    def ask(self, req: dict[str, Any]) -> Any:
        if self.wid is None:
            return {"applied": False, "reason": "no Run loaded"} if req.get("op") == "event" else {"status": None}
        ev = req.get("event")
        if req.get("op") == "event" and isinstance(ev, dict) and list(ev) == ["crash"]:
            self.kill()
            self._spawn()
            return {"applied": True, "reason": None}
        self.n += 1
        mid = f"{self.wid}:{self.n}"
        self.client.send(self.wid, {"n": self.n, "req": req}, topic="ingress", idempotency_key=mid)
        return self._reply(self.n)

    def close(self) -> None:
        try:
            if self.child is not None and self.child.is_alive():
                self._finish(timeout=5)
        except Exception:  # noqa: BLE001,S110 - closing down
            pass
        self.kill()
        if self.client is not None:
            try:
                self.client.delete_queue(self.executor)
            except Exception:  # noqa: BLE001,S110 - closing down
                pass
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
