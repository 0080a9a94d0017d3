"""Runs on DBOS (docs/durable.md#architecture): one DBOS workflow per Run
whose body is the reference engine (:class:`loopc.interpreter.host.Engine`),
unchanged, as the scheduler.

* every external effect is a DBOS step (``loopc.durable.effect``) carrying
  the effect identity key ``<run>:<activation>:<attempt>``;
* committed journal steps go to the ``loopc_journal`` table in a DBOS step
  (``loopc.durable.journal``), one row per record, before each effect and at
  each quiescence: no whole-journal snapshot is ever written;
* outside events (callback, approve, reject, cancel) are DBOS messages on
  topic ``ingress`` with an idempotency key; the workflow applies each
  through the engine's own checks and publishes its outcome as the DBOS
  event ``done:<message id>``;
* the wall clock is read in a DBOS step, so a recovered workflow re-reads
  the same instants; timers wait in ``DBOS.recv``'s durable timeout.

DBOS runs with the portable JSON serializer (never pickle for what loopc
writes), no admin HTTP server (DBOS 3.4 has none) and no network listener.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import secrets
import time
from decimal import Decimal
from typing import Any, Mapping

from dbos import DBOS, DBOSConfig, DBOSPortableJSONSerializer, SetWorkflowID

from loopc import __version__
from loopc.durable.handlers import EFFECT_ACTIONS, Effect, bind_handlers, handler_factory
from loopc.durable.store import Store, first_line
from loopc.plan.builtin import action_type
from loopc.interpreter.host import (EPOCH, Engine, World, effect_of, input_problems, is_member_id, next_timer_due,
                                    program_from_artifact, waiting_for)

__all__ = ["APP_VERSION", "launch", "shutdown", "quiesce", "silence", "start_run", "post", "wait_outcome", "new_run_id",
           "release", "take", "sweep", "DurableError", "WORKER_EXECUTOR", "RUNS_QUEUE"]

#: DBOS application version: a pending Run is recovered only by a process of
#: the same version (docs/durable.md#versioning).
APP_VERSION = f"loopc-{__version__}-durable-1"
#: DBOS application name (owner of loopc's workflows and queues in the database)
APP_NAME = "loopc"
WORKER_EXECUTOR = "loopc-worker"
#: The DBOS queue workers dequeue Runs from; commands hand their Runs to it on exit.
RUNS_QUEUE = "loopc-runs"
#: The workflow name of a Run.
RUN_WORKFLOW = "loopc.durable.run"
IDLE_SECONDS = 86_400.0
_EPOCH_TS = int(EPOCH.timestamp())

_store: Store | None = None
_log = logging.getLogger("loopc.durable")
_programs: dict[str, Any] = {}


class DurableError(Exception):
    """A durable command cannot proceed (unknown Run, bad artifact, ...)."""


def _st() -> Store:
    if _store is None:
        raise DurableError("the durable runtime is not launched")
    return _store


def poll_interval() -> float:
    """``LOOPC_DURABLE_POLL`` (seconds, default 0.1): DBOS's polling interval."""
    return float(os.environ.get("LOOPC_DURABLE_POLL", "0.1"))


def dbos_log_level() -> str:
    """``LOOPC_DURABLE_DBOS_LOG`` (default ``ERROR``): the level of DBOS's own
    log lines on stderr.  Its warnings are expected situations here (a Run
    handed to another process, a step refused after that), so they are not
    shown unless asked for (docs/durable.md#commands)."""
    return os.environ.get("LOOPC_DURABLE_DBOS_LOG", "ERROR").upper()


def launch(url: str, executor_id: str, *, role: str | None = None, queues: list[str] | None = None) -> Store:
    """Open loopc's tables and launch DBOS on database ``url`` as executor
    ``executor_id`` (DBOS recovers that executor's pending workflows).

    ``role`` ``"command"``: dequeue from no queue of loopc's (a command runs
    only the Runs it takes, :func:`take`); ``"worker"``: register and dequeue
    :data:`RUNS_QUEUE` (docs/durable.md#commands, worker); ``None``: DBOS's
    default (every queue), or ``queues``, the only DBOS queues to dequeue
    from (``loopc durable protocol``'s executor, docs/durable.md#protocol)."""
    global _store
    store = Store(url)
    poll = poll_interval()
    config: DBOSConfig = {
        "name": APP_NAME, "system_database_url": store.url, "application_version": APP_VERSION,
        "executor_id": executor_id, "serializer": DBOSPortableJSONSerializer(), "log_level": dbos_log_level(),
        "notification_listener_polling_interval_sec": poll, "enable_otlp": False,
    }
    _store = store
    DBOS(config=config)
    if role == "command":
        DBOS.listen_queues([])
    elif role == "worker":
        DBOS.listen_queues([RUNS_QUEUE])
    elif queues is not None:
        DBOS.listen_queues(queues)
    DBOS.launch()
    if role == "worker":
        DBOS.register_queue(RUNS_QUEUE, polling_interval_sec=poll)
    return store


def silence() -> None:
    """Show none of DBOS's log lines from now on (a process that is leaving)."""
    logging.getLogger("dbos").setLevel(logging.CRITICAL + 1)


def quiesce() -> None:
    """The first step of leaving: stop DBOS's background threads and join
    them (its queue threads included), so none is half-way through
    dequeuing a Run when :func:`release` hands the Runs over and
    :func:`shutdown` removes the executor (the race that logged "Executor
    accessed before DBOS was launched"); for a worker, which dequeues
    :data:`RUNS_QUEUE`.  DBOS's log lines are not shown from here on
    (:func:`silence`).  Best effort (private attributes of DBOS 3.x)."""
    silence()
    from dbos import _dbos

    inst = getattr(_dbos, "_dbos_global_instance", None)
    if inst is None:
        return
    for event in list(getattr(inst, "background_thread_stop_events", ())):
        event.set()
    for thread in list(getattr(inst, "_background_threads", ())):
        thread.join(timeout=5.0)


def shutdown() -> None:
    DBOS.destroy(workflow_completion_timeout_sec=0)


def new_run_id() -> str:
    """A production Run id: ``run_`` and 16 random hex digits, unique per start."""
    return "run_" + secrets.token_hex(8)


def wall_now() -> Decimal:
    """The wall clock in the engine's instants (seconds since the Run epoch, ms)."""
    return Decimal(time.time_ns() // 1_000_000) / 1000 - _EPOCH_TS


def _program(digest: str) -> Any:
    prog = _programs.get(digest)
    if prog is None:
        text = _st().artifact(digest)
        if text is None:
            raise DurableError(f"artifact {digest} is not in the database")
        prog, why = program_from_artifact(text.encode("utf-8"))
        if prog is None:
            raise DurableError(f"artifact {digest} is refused: {why}")
        _programs[digest] = prog
    return prog


# ---------------------------------------------------------------------- steps
@DBOS.step(name="loopc.durable.clock")
def _clock_step() -> str:
    return str(wall_now())


@DBOS.step(name="loopc.durable.journal")
def _journal_step(run: str, records: list[dict[str, Any]]) -> int:
    _st().append(run, records)
    return len(records)


@DBOS.step(name="loopc.durable.settle")
def _settle_step(run: str, status: str, output: Any, error: Any, state: Any, records: int,
                 waiting: list[dict[str, Any]] | None = None) -> str:
    _st().settle(run, status, output, error, state, records, waiting)
    return status


@DBOS.step(name="loopc.durable.effect")
def _effect_step(handler: str, options: dict[str, Any], effect: dict[str, Any]) -> bool:
    try:
        h = handler_factory(handler)(options)
    except Exception as exc:  # noqa: BLE001 - a handler missing here (no --handlers) never stops the workflow
        _log.warning("handler %s: effect %s not delivered: %s: %s", handler, effect["key"], type(exc).__name__,
                     first_line(exc))
        return False
    try:
        ok = bool(h.deliver(Effect(**effect)))
    except Exception as exc:  # noqa: BLE001 - a handler's failure is a failed delivery (the node's retry policy)
        _log.warning("handler %s: effect %s not delivered: %s: %s", handler, effect["key"], type(exc).__name__,
                     first_line(exc))
        return False
    _fault_after_effect(str(effect["key"]))
    return ok


def _fault_after_effect(key: str) -> None:
    """Fault injection for the crash tests (docs/durable.md#crash-tests):
    with ``LOOPC_DURABLE_DIE_AFTER_EFFECT=DIR``, the process kills itself
    with SIGKILL after a handler performed an effect and before DBOS
    records the step, once per effect key (a marker file in DIR)."""
    where = os.environ.get("LOOPC_DURABLE_DIE_AFTER_EFFECT")
    if not where:
        return
    import signal

    marker = os.path.join(where, hashlib.sha256(key.encode("utf-8")).hexdigest()[:16])
    if os.path.exists(marker):
        return
    with open(marker, "w", encoding="utf-8"):
        pass
    os.kill(os.getpid(), signal.SIGKILL)


# ---------------------------------------------------------------------- the Run
class _Host(World):
    """The engine's world inside the workflow: deliveries as DBOS steps."""

    def __init__(self, run: str, prog: Any, bindings: Mapping[str, Any]) -> None:
        self.run = run
        self.prog = prog
        self.handlers: dict[str, str] = dict(bindings.get("handlers", {}))
        self.options: dict[str, Any] = dict(bindings.get("options", {}))
        self.buffer: list[dict[str, Any]] = []
        self.written = 0
        self.eng: Engine | None = None

    def on_step(self, eng: Engine) -> None:
        self.buffer.extend(eng.steps[-1])

    def flush(self) -> None:
        if self.buffer:
            recs, self.buffer = self.buffer, []
            self.written += _journal_step(self.run, recs)

    def settle(self) -> None:
        eng = self.eng
        assert eng is not None
        self.flush()
        _settle_step(self.run, eng.status, eng.output, eng.error, dict(eng.state), self.written, waiting_for(eng))

    def deliver(self, node: str, ordinal: int, effect: str, key: str = "") -> bool:
        assert self.eng is not None
        self.flush()  # the reservation is journaled before the effect happens
        info = effect_of(self.eng, effect)
        if info is None:
            return False
        n = self.prog.nodes[node]
        action = action_type(n.op, n.config)
        handler = self.handlers.get(action)
        if handler is None:
            return False
        eff = Effect(key=key or info["key"], run=self.run, act=info["act"], attempt=info["attempt"], node=node,
                     action=action, effect=effect, ordinal=ordinal, request=info["request"])
        return bool(_effect_step(handler, self.options, eff.to_json()))


def _advance_to(eng: Engine, now: Decimal) -> None:
    if eng.terminal or now <= eng.now:
        return
    eng.advance(now, f"PT{now - eng.now}S")


def _apply(eng: Engine, msg: Mapping[str, Any]) -> dict[str, Any]:
    """Apply one ingress message through the engine's own checks:
    ``{"applied": bool, "reason": str | None, "status"}``."""
    k = msg.get("kind")
    reason: str | None = None
    if k == "cancel":
        ok = eng.cancel()
        reason = None if ok else f"the Run is {eng.status}"
        return {"applied": ok, "reason": reason, "status": eng.status}
    node, item = str(msg.get("node")), msg.get("item")
    act, reason = eng.find_open(node, item, None, ("awaiting",))
    if k == "callback":
        if act is not None and act.node.op != "send_message":
            reason = f"'{node}' is a {act.node.op}, not a callback"
            act = None
        if act is not None:
            reason = eng.check_callback(act, msg.get("output"), msg.get("fail"), msg.get("workItems"))
        if act is not None and reason is None:
            eng.callback(act, act.attempt, output=msg.get("output"), fail=msg.get("fail"),
                         work_items=msg.get("workItems"))
            return {"applied": True, "reason": None, "status": eng.status}
    elif k in ("approve", "reject"):
        if act is None and reason is not None and reason.startswith("no open callback"):
            reason = "no open approval" + reason[len("no open callback"):]  # the engine's lookup says callback
        if act is not None and act.node.op != "request_approval":
            reason = f"'{node}' is a {act.node.op}, not an approval"
            act = None
        if act is not None and not is_member_id(msg.get("by")):
            reason = f"by {msg.get('by')!r} is not a member id"
            act = None
        if act is not None:
            eng.decide(act, act.attempt, k == "approve", str(msg.get("by")), msg.get("comment"))
            return {"applied": True, "reason": None, "status": eng.status}
    else:
        reason = f"unknown event kind {k!r}"
    return {"applied": False, "reason": reason, "status": eng.status}


@DBOS.workflow(name=RUN_WORKFLOW)
def run_workflow(run: str) -> str:
    """One Run, start to end (see the module docstring)."""
    meta = _st().run(run)  # immutable fields only: digest, input, start instant, bindings
    if meta is None:
        raise DurableError(f"no Run {run}")
    prog = _program(meta["digest"])
    host = _Host(run, prog, meta["bindings"])
    eng = Engine(prog, host, on_step=host.on_step)
    host.eng = eng
    eng.start(meta["input"], Decimal(meta["startedAt"]), run_id=run)
    host.settle()
    DBOS.set_event("started", {"status": eng.status})
    while not eng.terminal:
        due = next_timer_due(eng)
        timeout = IDLE_SECONDS
        if due is not None:
            now = Decimal(_clock_step())
            if due <= now:
                _advance_to(eng, now)
                host.settle()
                continue
            timeout = float(due - now)
        msg = DBOS.recv("ingress", timeout_seconds=timeout)
        _advance_to(eng, Decimal(_clock_step()))
        outcome = _apply(eng, msg) if isinstance(msg, dict) else None
        host.settle()
        if outcome is not None and isinstance(msg, dict):
            DBOS.set_event(f"done:{msg.get('id')}", outcome)
    return eng.status


# ---------------------------------------------------------------------- commands
def start_run(artifact: bytes, plan_input: Mapping[str, Any], *, run: str, catalog: Any,
              options: Mapping[str, Any]) -> dict[str, Any]:
    """Store the artifact (by digest) and the Run (digest pinned), start its
    workflow and wait until the Run first waits or ends:
    ``{"run", "status"}``.  Raises :class:`DurableError`."""
    prog, why = program_from_artifact(artifact)
    if prog is None:
        raise DurableError(f"the artifact is refused: {why}")
    problems = input_problems(prog, dict(plan_input))
    if problems:
        raise DurableError("the input does not match the Plan input: " + "; ".join(problems))
    actions = sorted({a for a in (action_type(n.op, n.config) for n in prog.nodes.values()) if a in EFFECT_ACTIONS})
    try:
        handlers = bind_handlers(catalog, actions)
        for name in sorted(set(handlers.values())):  # the factories check the options before a Run exists
            try:
                handler_factory(name)(dict(options))
            except Exception as exc:  # noqa: BLE001 - a factory's refusal: one line
                raise DurableError(f"the handler '{name}' refuses its options: {exc}") from None
    except DurableError:
        raise
    except Exception as exc:
        raise DurableError(str(exc)) from None
    st = _st()
    st.put_artifact(prog.digest, artifact.decode("utf-8"))
    st.create_run(run, prog.digest, dict(plan_input), str(wall_now()),
                  {"handlers": handlers, "options": dict(options), "catalog": catalog.digest})
    with SetWorkflowID(run):
        DBOS.start_workflow(run_workflow, run)
    got = _wait_event(run, "started", 120.0)
    row = st.run(run) or {}
    return {"run": run, "status": (got or {}).get("status", row.get("status"))}


def _wait_event(run: str, key: str, timeout: float) -> Any:
    """The Run's DBOS event ``key``, waiting up to ``timeout`` seconds;
    raises :class:`DurableError` when the Run's workflow stopped with an
    error instead (a handler no longer registered, a database failure)."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        got = DBOS.get_event(run, key, timeout_seconds=min(left, 1.0))
        if got is not None:
            return got
        ws = DBOS.get_workflow_status(run)
        if ws is not None and ws.status in ("ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"):
            raise DurableError(f"the Run's workflow stopped ({ws.status}): {ws.error}")


def message_id(run: str, event: Mapping[str, Any], seen: int) -> str:
    """The idempotency key of an ingress message: the same event posted at
    the same journal length is one message."""
    h = hashlib.sha256(json.dumps([run, event, seen], sort_keys=True).encode("utf-8")).hexdigest()
    return "msg_" + h[:24]


def post(run: str, event: dict[str, Any]) -> str:
    """Send ``event`` to the Run's workflow (idempotent); returns its id."""
    st = _st()
    mid = message_id(run, event, st.count(run))
    DBOS.send(run, {**event, "id": mid}, topic="ingress", idempotency_key=mid)
    return mid


def wait_outcome(run: str, mid: str, timeout: float) -> dict[str, Any] | None:
    """The outcome the workflow published for message ``mid``, or ``None``
    when it did not within ``timeout`` seconds (or the Run ended first).
    Raises :class:`DurableError` when the Run's workflow stopped with an error."""
    deadline = time.monotonic() + timeout
    st = _st()
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        got = _wait_event(run, f"done:{mid}", min(left, 1.0))
        if got is not None:
            return dict(got)
        row = st.run(run)
        if row is not None and row["status"] in ("succeeded", "failed", "cancelled"):
            got = DBOS.get_event(run, f"done:{mid}", timeout_seconds=0.2)
            return dict(got) if got is not None else None


def release(executor_id: str) -> int:
    """A command's exit: hand every open Run this process executes (its
    DBOS executor is ``executor_id``) to :data:`RUNS_QUEUE`, where a running
    worker dequeues it at once and the next worker to start finds it.  Uses
    ``DBOS.resume_workflow`` (it re-enqueues a pending workflow; the new
    runner takes ownership, so a step this process would still record is
    refused).  Call :func:`quiesce` first, so that this process's own queue
    thread (a worker listens to :data:`RUNS_QUEUE`) cannot dequeue a Run it
    just handed over.  Returns how many Runs were handed over."""
    mine = DBOS.list_workflows(status="PENDING", executor_id=executor_id, name=RUN_WORKFLOW, load_input=False,
                               load_output=False)
    for w in mine:
        DBOS.resume_workflow(w.workflow_id, queue_name=RUNS_QUEUE)
    return len(mine)


def take(run: str) -> bool:
    """A command that posted to ``run``: when the Run waits on
    :data:`RUNS_QUEUE` (no worker took it), move it to DBOS's internal queue,
    which this process dequeues, so the command executes it while it waits
    for its outcome.  A Run a live process executes is left alone.  Returns
    whether the Run was taken."""
    ws = DBOS.get_workflow_status(run)
    if ws is None or ws.status != "ENQUEUED":
        return False
    DBOS.resume_workflow(run)
    return True


def sweep(stale_seconds: float = 0.0) -> int:
    """A worker's pick-up of Runs left by commands that died (``kill -9``)
    before handing them over (:func:`release`): every pending Run whose DBOS
    executor is still a command's (a Run id) and whose status row is older
    than ``stale_seconds`` goes to :data:`RUNS_QUEUE`.  Runs of other workers
    (their executor ids) are left alone.  Returns how many were moved."""
    cutoff = (time.time() - stale_seconds) * 1000
    n = 0
    for w in DBOS.list_workflows(status="PENDING", name=RUN_WORKFLOW, load_input=False, load_output=False):
        ex = w.executor_id or ""
        if ex.startswith("run_") and (w.updated_at or 0) <= cutoff:
            DBOS.resume_workflow(w.workflow_id, queue_name=RUNS_QUEUE)
            n += 1
    return n
