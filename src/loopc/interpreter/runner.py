"""Scenario runner: compile the plan, verify the artifact, drive the engine
with the scripted world, compare expectations (docs/conformance.md).

* :func:`prepare` — scenario path/bytes → :class:`Prepared` (scenario and
  executable program) or problems (a malformed scenario or plan: exit 2);
* :func:`run_prepared` — execute → :class:`Report` (the ``--format json``
  object of ``loopc run``);
* :func:`dump_journal` / :func:`parse_journal` / :func:`resume` /
  :func:`replay` — the journal on disk (one JSON line per step) and the
  resume/replay drivers.

No file I/O except :func:`prepare_file` (reads the scenario and its plan).
"""
from __future__ import annotations

import json
import os
from typing import Any, Callable, Mapping

import attrs

from loopc.interpreter.clock import VirtualClock, format_instant, parse_instant
from loopc.interpreter.engine import DEFAULT_BUDGET, Budget, Engine, JournalDivergence, NoWorld, World
from loopc.interpreter.program import Program, load_program
from loopc.interpreter.scenario import Event, Scenario, ScenarioProblem, load_scenario
from loopc.interpreter.values import contract_problems

__all__ = ["Prepared", "Report", "ScenarioWorld", "prepare", "prepare_file", "run_prepared", "run_file",
           "dump_journal", "parse_journal", "resume", "replay", "JournalError", "verify_artifact",
           "INPUT_KINDS", "strip_markers", "Budget", "DEFAULT_BUDGET", "restore", "Durable", "run_id_of"]

#: Journal record kinds that are outside inputs (each starts its own step).
INPUT_KINDS = ("run.started", "callback.accepted", "callback.failed", "decision.recorded", "clock.advanced",
               "run.cancelled")
MAX_SCENARIO_BYTES = 1024 * 1024


class JournalError(Exception):
    """The journal text is corrupt before its last line."""


class ScenarioWorld(World):
    """The scripted world: ``deliveries[n] = k`` fails the first k delivery
    attempts of node n in the Run; ``transport[n] = k`` makes every delivery
    of n need k private transport retries (same effect identity)."""

    def __init__(self, deliveries: Mapping[str, int], transport: Mapping[str, int]) -> None:
        self.deliveries = dict(deliveries)
        self.transport = dict(transport)

    def deliver(self, node: str, ordinal: int, effect: str, key: str = "") -> bool:
        return ordinal > self.deliveries.get(node, 0)

    def transport_fault(self, node: str, ordinal: int, effect: str) -> bool:
        return ordinal <= self.transport.get(node, 0)


@attrs.frozen
class Prepared:
    scenario: Scenario
    program: Program
    artifact_bytes: bytes


def run_id_of(prep: Prepared) -> str | None:
    """The Run id of a scenario's Run (``loopc run`` and ``conform``'s
    ``load`` use it; docs/conformance.md#run-ids): derived from the artifact
    digest, the Plan input with defaults applied and the scenario's name
    (its file name without the extension), so that every scenario has its
    own.  ``None`` for a scenario read without a path."""
    from loopc.interpreter.engine import scenario_run_id
    from loopc.interpreter.values import apply_defaults
    from loopc.ir.canonical import canonical_bytes

    path = prep.scenario.path
    if not path:
        return None
    name = os.path.splitext(os.path.basename(path))[0]
    inp = canonical_bytes(apply_defaults(prep.scenario.input, prep.program.input))
    return scenario_run_id(prep.program.digest, inp, name)


@attrs.define
class Report:
    """Outcome of one scenario (keys of ``loopc run --format json``)."""

    status: str = "waiting"
    output: Any = None
    error: Any = None
    state: dict[str, Any] = attrs.Factory(dict)
    visits: dict[str, int] = attrs.Factory(dict)
    attempts: dict[str, int] = attrs.Factory(dict)
    events: list[dict[str, Any]] = attrs.Factory(list)
    journal: list[dict[str, Any]] = attrs.Factory(list)
    differences: list[str] = attrs.Factory(list)
    steps: list[list[dict[str, Any]]] = attrs.Factory(list)

    @property
    def ok(self) -> bool:
        return not self.differences

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "output": self.output, "error": self.error, "state": self.state,
                "visits": self.visits, "attempts": self.attempts, "events": self.events,
                "journal": self.journal, "expectationsMet": self.ok, "differences": self.differences}


def verify_artifact(data: bytes) -> tuple[Any, str | None]:
    """Strict verification of artifact bytes (decode + digest)."""
    from loopc.ir.verifier import verify as _verify
    res = _verify(data)
    if not res.ok:
        return None, res.message
    return res.artifact, None


def prepare(sc: Scenario, plan_bytes: bytes | None, plan_path: str,
            unreadable: str = "") -> Prepared | list[ScenarioProblem]:
    """Compile and verify the scenario's plan; check the Plan input.
    ``plan_bytes`` is ``None`` when the plan could not be read
    (``unreadable`` says why)."""
    from loopc.diagnostics import Span
    from loopc.pipeline import compile_source

    if plan_bytes is None:
        because = f": {unreadable}" if unreadable else ""
        return [ScenarioProblem(sc.path, Span(1, 1, 1, 2), f"cannot read plan '{sc.plan}'{because}",
                                "scenario.plan_unreadable")]
    res = compile_source(plan_bytes, path=plan_path)
    if not res.ok:
        out = [ScenarioProblem(plan_path, d.span or Span(1, 1, 1, 2), d.message, d.code) for d in res.errors]
        return out or [ScenarioProblem(plan_path, Span(1, 1, 1, 2), "the plan does not compile", "scenario.plan")]
    assert res.bytes is not None
    art, why = verify_artifact(res.bytes)
    if art is None:
        return [ScenarioProblem(plan_path, Span(1, 1, 1, 2), f"artifact refused: {why}", "scenario.artifact")]
    prog = load_program(art)
    problems = input_problems(sc, prog)
    if problems:
        return problems
    return Prepared(sc, prog, res.bytes)


def input_problems(sc: Scenario, prog: Program) -> list[ScenarioProblem]:
    """Every mismatch of the scenario input with the Plan input, each at the
    value it is about (``scenario.input``)."""
    out = [ScenarioProblem(sc.path, sc.span_of(path), f"the scenario input does not match the Plan input: {msg}",
                           "scenario.input")
           for path, msg in contract_problems(sc.input, prog.input, "input")]
    return sorted(out, key=lambda p: (p.span.line, p.span.column))


_CACHE: dict[tuple[str, bytes], Any] = {}


def prepare_file(path: str) -> Prepared | list[ScenarioProblem]:
    """Read a scenario file and its plan (relative to the scenario file)."""
    from loopc.diagnostics import Span

    from loopc.boundedio import read_bounded
    from loopc.compiler.yamlload import MAX_SOURCE_BYTES

    try:
        data = read_bounded(path, MAX_SCENARIO_BYTES)  # budget + 1 byte, never a FIFO or device
    except OSError as exc:
        reason = getattr(exc, "reason", None) or exc.strerror or str(exc)
        return [ScenarioProblem(path, Span(1, 1, 1, 2), f"cannot read: {reason}", "scenario.unreadable")]
    if len(data) > MAX_SCENARIO_BYTES:
        return [ScenarioProblem(path, Span(1, 1, 1, 2), "the scenario is larger than 1 MiB", "scenario.too_large")]
    sc = load_scenario(data, path)
    if isinstance(sc, list):
        return sc
    plan_path = os.path.normpath(os.path.join(os.path.dirname(path), sc.plan))
    plan_why = ""
    try:
        plan_bytes: bytes | None = read_bounded(plan_path, MAX_SOURCE_BYTES)
    except OSError as exc:
        plan_bytes, plan_why = None, getattr(exc, "reason", None) or exc.strerror or str(exc)
    key = (plan_path, plan_bytes or b"")
    cached = _CACHE.get(key)
    if cached is not None and plan_bytes is not None:
        prog, raw = cached
        problems = input_problems(sc, prog)
        if problems:
            return problems
        return Prepared(sc, prog, raw)
    out = prepare(sc, plan_bytes, plan_path, plan_why)
    if isinstance(out, Prepared) and len(_CACHE) < 256:
        _CACHE[key] = (out.program, out.artifact_bytes)
    return out


# ---------------------------------------------------------------------------
# Journal text and the resume / replay drivers
# ---------------------------------------------------------------------------

def dump_journal(steps: list[list[dict[str, Any]]], first: int = 1) -> str:
    """One JSON line per committed step: ``{"step": n, "records": [...]}``,
    numbered from ``first`` (a journal's tail after a checkpoint)."""
    return "".join(json.dumps({"step": i + first, "records": s}, sort_keys=True, separators=(",", ":"),
                              ensure_ascii=False) + "\n" for i, s in enumerate(steps))


def parse_journal(text: str, first: int = 1) -> list[list[dict[str, Any]]]:
    """Committed steps of a journal text whose first line is step ``first``;
    a torn (unparsable or incomplete) last line is dropped — that step never
    committed."""
    lines = text.split("\n")
    steps: list[list[dict[str, Any]]] = []
    for i, line in enumerate(lines):
        if not line:
            continue
        last = i == len(lines) - 1  # no trailing newline: the write did not finish
        try:
            obj = json.loads(line)
        except ValueError:
            if last:
                break
            raise JournalError(f"journal line {i + 1} is corrupt") from None
        if last:
            break
        want = len(steps) + first
        if not isinstance(obj, dict) or obj.get("step") != want or not isinstance(obj.get("records"), list):
            raise JournalError(f"journal line {i + 1} is not step {want}")
        steps.append(obj["records"])
    return steps


def resume(program: Program, steps: list[list[dict[str, Any]]], world: World | None = None, *,
           engine_cls: type[Engine] = Engine, on_step: Callable[[Engine], None] | None = None,
           budget: Budget = DEFAULT_BUDGET) -> Engine:
    """Rebuild a Run from its committed steps alone: re-enter the engine
    loop, re-apply the journaled inputs in order, skip (and check) every
    committed step; outside answers come from the journal, then ``world``.
    ``budget`` must be the Run's own (a smaller one diverges where it stops
    the Run earlier)."""
    eng = engine_cls(program, world, expected=steps, on_step=on_step, budget=budget)
    return _reapply(eng, steps)


def restore(program: Program, checkpoint: Mapping[str, Any], steps: list[list[dict[str, Any]]],
            world: World | None = None, *, engine_cls: type[Engine] = Engine,
            on_step: Callable[[Engine], None] | None = None, budget: Budget = DEFAULT_BUDGET) -> Engine:
    """Rebuild a Run from its last checkpoint (:meth:`Engine.checkpoint`) and
    the committed steps after it (``steps``, the journal's tail): restore
    the engine state, re-apply the tail's inputs and compare every step it
    re-executes with the journal, as :func:`resume` does for a whole
    journal.  Costs what the tail costs, not the Run's history."""
    eng = engine_cls.restore(program, checkpoint, world, expected=steps, on_step=on_step, budget=budget)
    return _reapply(eng, steps)


def _reapply(eng: Engine, steps: list[list[dict[str, Any]]]) -> Engine:
    """Re-apply the journaled inputs of ``steps`` (committed after the
    engine's state) in order; each re-executed step is checked against its
    committed one by the engine (``expected``)."""
    if not steps:
        eng.expected = []
        return eng
    base = eng.base
    for idx, step in enumerate(steps):
        if not isinstance(step, list) or not step or not isinstance(step[0], dict):
            raise JournalDivergence(f"step {base + idx + 1} is not a list of records")
        r = step[0]
        k = r.get("kind")
        if k not in INPUT_KINDS:
            continue
        if len(eng.steps) != idx:
            raise JournalDivergence(f"step {base + idx + 1} is an input but re-execution is at step "
                                    f"{base + len(eng.steps) + 1}")
        at = parse_instant(r["at"])
        if k == "run.started":
            eng.start(r["input"], at, run_id=r.get("run"))
        elif k == "clock.advanced":
            eng._set_now(at)
            eng.advance(parse_instant(r["to"]), r["by"], r.get("event"))
        elif k == "run.cancelled":
            eng._set_now(at)
            eng.cancel(r.get("event"))
        else:
            act = eng.acts.get(r["act"])
            if act is None:
                raise JournalDivergence(f"step {base + idx + 1} addresses unknown activation {r['act']}")
            eng._set_now(at)
            if k == "callback.accepted":
                eng.callback(act, r["attempt"], output=r["output"], work_items=r.get("workItems"), event=r.get("event"))
            elif k == "callback.failed":
                eng.callback(act, r["attempt"], fail=r["error"], event=r.get("event"))
            else:
                eng.decide(act, r["attempt"], r["decision"] == "approved", r["by"], r.get("comment"), r.get("event"))
    if len(eng.steps) < len(steps):
        raise JournalDivergence(f"re-execution stopped at step {base + len(eng.steps)} of {base + len(steps)} "
                                "committed")
    eng.expected = []
    return eng


def replay(program: Program, steps: list[list[dict[str, Any]]], *, engine_cls: type[Engine] = Engine,
           clock: VirtualClock | None = None) -> Engine:
    """Replay with the outside world removed: every answer must come from
    the journal.  ``clock`` is a world clock the replay must not consult
    (tests pass one shifted by 100 days)."""
    del clock  # the engine has no clock: instants come from journaled inputs only
    return resume(program, steps, NoWorld(), engine_cls=engine_cls)


def strip_markers(journal: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in journal if not r.get("marker")]


# ---------------------------------------------------------------------------
# Running a scenario
# ---------------------------------------------------------------------------

class Durable:
    """What survives a crash of a Run in :func:`run_prepared`: the committed
    steps (the journal) and the last checkpoint of engine state, as text.

    A checkpoint is written after an outside input once the journal since
    the previous one is about as large as a checkpoint (``RECORD_CHARS``
    characters per record against the checkpoint's length), so writing
    them costs at most about as much as writing the journal, and a
    recovery reads one checkpoint and a journal tail of about the same
    size: it costs the live state of the Run, not its history."""

    #: A journal record's weight against a checkpoint's characters.
    RECORD_CHARS = 100

    def __init__(self) -> None:
        self.steps: list[list[dict[str, Any]]] = []
        self.checkpoint: str | None = None
        self.checkpoint_steps = 0
        self.checkpoint_seq = 0
        self.checkpoints = 0

    def sync(self, eng: Engine) -> None:
        """Record the steps ``eng`` committed since the last sync."""
        have = len(self.steps) - eng.base
        if have < len(eng.steps):
            self.steps.extend(eng.steps[have:])

    def maybe_checkpoint(self, eng: Engine) -> None:
        self.sync(eng)
        since = eng._seq - self.checkpoint_seq
        if since <= 0 or eng._cur:
            return
        if self.checkpoint is not None and since * self.RECORD_CHARS < len(self.checkpoint):
            return
        self.checkpoint = json.dumps(eng.checkpoint(), separators=(",", ":"), ensure_ascii=False)
        self.checkpoint_steps = len(self.steps)
        self.checkpoint_seq = eng._seq
        self.checkpoints += 1

    def recover(self, program: Program, eng: Engine, world: World, **kw: Any) -> Engine:
        """Drop ``eng``; a new engine from the last checkpoint and the
        journal after it, both read back from text."""
        self.sync(eng)
        first = self.checkpoint_steps + 1
        tail = parse_journal(dump_journal(self.steps[self.checkpoint_steps:], first), first)
        if self.checkpoint is None:
            return resume(program, tail, world, **kw)
        return restore(program, json.loads(self.checkpoint), tail, world, **kw)


def _count_attempts(eng: Engine) -> dict[str, int]:
    return dict(eng.attempt_counts)


def run_prepared(prep: Prepared, *, crash_after_every: bool = False, engine_cls: type[Engine] = Engine,
                 on_step: Callable[[Engine], None] | None = None,
                 events: tuple[Event, ...] | None = None, budget: Budget = DEFAULT_BUDGET) -> Report:
    """Execute the scenario and compare its expectations.  ``budget`` bounds
    the Run (docs/conformance.md#budgets): going over fails it with
    ``runtime.budget_exceeded``.  Never raises on a scenario: a journal
    divergence on resume, or an unexpected error inside the engine (a
    defect), is a difference in the report; only ``AssertionError`` from
    ``on_step`` (the invariant monitor) propagates."""
    sc = prep.scenario
    world = ScenarioWorld(sc.deliveries, sc.transport)
    clock = VirtualClock()
    rep = Report()
    markers: list[dict[str, Any]] = []
    eng = engine_cls(prep.program, world, on_step=on_step, budget=budget)
    store = Durable()

    def crash() -> None:
        nonlocal eng
        seq = eng._seq
        eng = store.recover(prep.program, eng, world, engine_cls=engine_cls, on_step=on_step, budget=budget)
        markers.append({"kind": "run.recovered", "marker": True, "afterSeq": seq, "at": format_instant(clock.now),
                        "steps": len(store.steps)})

    try:
        eng.start(sc.input, clock.now, run_id=run_id_of(prep))
        store.maybe_checkpoint(eng)
        evs = sc.events if events is None else events
        for ev in evs:
            entry = _apply(eng, ev, clock, crash, rep)
            rep.events.append(entry)
            if crash_after_every and ev.kind != "crash":
                crash()
            elif ev.kind != "crash":
                store.maybe_checkpoint(eng)
    except JournalDivergence as exc:
        rep.differences.append(f"journal divergence on resume: {exc}")
    except AssertionError:  # the invariant monitor (InvariantViolation) and test hooks
        raise
    except Exception as exc:  # noqa: BLE001 - a defect of the interpreter is a reported failure, not a traceback
        rep.differences.append(f"internal error in the reference interpreter (a loopc defect, please report it): "
                               f"{type(exc).__name__}: {exc}")
    store.sync(eng)
    rep.status = eng.status
    rep.output = eng.output
    rep.error = eng.error
    rep.state = dict(eng.state)
    rep.visits = dict(sorted(eng.visits.items()))
    rep.attempts = dict(sorted(_count_attempts(eng).items()))
    rep.steps = store.steps
    rep.journal = _splice([r for s in store.steps for r in s], markers)
    _compare(sc.expect, rep)
    return rep


def _splice(records: list[dict[str, Any]], markers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if not markers:
        return records
    out: list[dict[str, Any]] = []
    mi = 0
    for r in records:
        while mi < len(markers) and markers[mi]["afterSeq"] < r["seq"]:
            out.append(markers[mi])
            mi += 1
        out.append(r)
    out.extend(markers[mi:])
    return out


def _apply(eng: Engine, ev: Event, clock: VirtualClock, crash: Callable[[], None], rep: Report) -> dict[str, Any]:
    """Apply one event; returns ``{"index", "applied", "reason"}`` and adds
    a difference when the outcome contradicts ``rejected``."""
    applied, reason = True, None
    k, a = ev.kind, ev.args
    if k == "advance":
        eng.advance(clock.advance(a["duration"]), a["duration"], ev.index)
    elif k == "cancel":
        eng.cancel(ev.index)
    elif k == "crash":
        crash()
    elif k == "expectStatus":
        if eng.status != a["status"]:
            rep.differences.append(f"event {ev.index} (line {ev.line}): expected status {a['status']}, "
                                   f"the Run is {eng.status}")
    elif k == "callback":
        act, reason = eng.find_open(a["node"], a.get("item"), a.get("attempt"), ("awaiting",))
        if act is not None and act.node.op != "send_message":
            reason, act = f"'{a['node']}' is a {act.node.op}, not a callback", None
        if act is not None:
            reason = eng.check_callback(act, a.get("output"), a.get("fail"), a.get("workItems"))
        if act is not None and reason is None:
            eng.callback(act, act.attempt, output=a.get("output"), fail=a.get("fail"),
                         work_items=a.get("workItems"), event=ev.index)
        else:
            applied = False
    else:  # approve / reject
        act, reason = eng.find_open(a["node"], a.get("item"), a.get("attempt"), ("awaiting",))
        if act is not None and act.node.op != "request_approval":
            reason, act = f"'{a['node']}' is a {act.node.op}, not an approval", None
        if act is not None:
            by = str(a.get("by", act.request.get("assignee")))
            eng.decide(act, act.attempt, k == "approve", by, a.get("comment"), ev.index)
        else:
            applied = False
    if k in ("callback", "approve", "reject"):
        if applied and ev.expect_rejected:
            rep.differences.append(f"event {ev.index} (line {ev.line}): {k} on '{a['node']}' applied, "
                                   "but the scenario says rejected: true")
        elif not applied and not ev.expect_rejected:
            rep.differences.append(f"event {ev.index} (line {ev.line}): {k} on '{a['node']}' was refused: {reason}")
    return {"index": ev.index, "applied": applied, "reason": None if applied else reason}


def _json_eq(a: Any, b: Any) -> bool:
    from loopc.ir.evaluator import _json_equal

    return _json_equal(a, b)


def _show(v: Any) -> str:
    return json.dumps(v, sort_keys=True, ensure_ascii=False)


def _compare(expect: Mapping[str, Any], rep: Report) -> None:
    d = rep.differences
    if "status" in expect and expect["status"] != rep.status:
        d.append(f"status: expected {expect['status']}, got {rep.status}"
                 + (f" (error {_show(rep.error)})" if rep.error else ""))
    if "output" in expect and not _json_eq(expect["output"], rep.output):
        d.append(f"output: expected {_show(expect['output'])}, got {_show(rep.output)}")
    if "error" in expect:
        got = rep.error or {}
        for k, v in expect["error"].items():
            if not _json_eq(v, got.get(k)):
                d.append(f"error.{k}: expected {_show(v)}, got {_show(got.get(k))}")
    if "state" in expect:
        for k, v in expect["state"].items():
            if k not in rep.state or not _json_eq(v, rep.state[k]):
                d.append(f"state.{k}: expected {_show(v)}, got {_show(rep.state.get(k))}")
    for key in ("visits", "attempts"):
        got_map = getattr(rep, key)
        for n, v in expect.get(key, {}).items():
            if got_map.get(n, 0) != v:
                d.append(f"{key}.{n}: expected {v}, got {got_map.get(n, 0)}")
    for field, want in expect.get("outputStatuses", {}).items():
        val = rep.output.get(field) if isinstance(rep.output, Mapping) else None
        got = [e.get("status") if isinstance(e, Mapping) else None for e in val] if isinstance(val, list) else None
        if got != want:
            d.append(f"outputStatuses.{field}: expected {want}, got {got}")


def run_file(path: str, **kw: Any) -> Report | list[ScenarioProblem]:
    prep = prepare_file(path)
    if isinstance(prep, list):
        return prep
    return run_prepared(prep, **kw)


