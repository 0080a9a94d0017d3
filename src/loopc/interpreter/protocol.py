"""The conformance JSON-lines protocol, version 2 (docs/conformance.md#protocol;
every message's JSON Schema: :mod:`loopc.interpreter.schemas`).

:func:`serve` runs the reference interpreter behind the protocol on a pair
of text streams (``python -m loopc.interpreter.protocol`` serves stdin and
stdout).  One request object per line, one response object per line:

* ``{"op": "load", "protocol": 2, "run": <Run id>, "artifact": <canonical
  artifact text>, "input": {...}, "faults": {"deliveries": {...},
  "transport": {...}}, "start": <instant>, "crashes": [...]}`` →
  ``{"ok": true, "protocol": 2}`` | ``{"ok": false, "error": "..."}`` (an
  artifact that does not verify, another protocol version);
* ``{"op": "event", "index": i, "event": {<scenario event>}}`` (an
  ``advance`` also carries ``"to"``, the target instant) →
  ``{"applied": bool, "reason": str | null}``;
* ``{"op": "report"}`` → ``{"status", "output", "error", "state", "visits",
  "attempts", "journal", "deliveries"}``;
* ``{"op": "quit"}`` → ``{"ok": true}`` and the server exits.

A ``crash`` event must make the runtime drop every in-memory structure and
continue from its journal alone.  With ``"crashes": ["afterEffectSubmit"]``
the host also crashes the Run inside every delivery step, right after the
first submission of each effect to the world and before that step commits;
the recovered Run submits the effect again with the same identity key
(``deliveries`` lists every submission).
"""
from __future__ import annotations

import json
import sys
from typing import IO, Any, Callable, Mapping

from loopc.interpreter.clock import format_instant, parse_instant
from loopc.interpreter.engine import Engine, JournalDivergence
from loopc.interpreter.program import load_program
from loopc.interpreter.runner import ScenarioWorld
from loopc.interpreter.scenario import Event
from loopc.interpreter.schemas import PROTOCOL_VERSION
from loopc.ir.evaluator import EvaluationError

__all__ = ["serve", "Session", "HostWorld", "CRASH_POINTS"]

#: Crash points a ``load`` may ask for (docs/conformance.md#crash-points).
CRASH_POINTS = ("afterEffectSubmit",)


class _CrashInsideStep(Exception):
    """The host's simulated crash between an effect's submission and the
    commit of its step."""


class HostWorld(ScenarioWorld):
    """The scenario's world as a host sees it: every submission is logged
    as ``{"effect", "key"}``; with ``crash_after_submit`` the first
    submission of each key crashes the Run before its step commits.  A key
    already answered gets the same answer (the world dedupes by key)."""

    def __init__(self, deliveries: Mapping[str, int], transport: Mapping[str, int], *,
                 crash_after_submit: bool = False) -> None:
        super().__init__(deliveries, transport)
        self.log: list[dict[str, str]] = []
        self.answers: dict[str, bool] = {}
        self.crash_after_submit = crash_after_submit
        self.crashed: dict[str, bool] = {}  # keys already crashed once (a dict: ordered, no hashing order)

    def deliver(self, node: str, ordinal: int, effect: str, key: str = "") -> bool:
        ok = self.answers.get(key) if key else None
        if ok is None:
            ok = super().deliver(node, ordinal, effect, key)
            if key:
                self.answers[key] = ok
        self.log.append({"effect": effect, "key": key})
        if self.crash_after_submit and key not in self.crashed:
            self.crashed[key] = True
            raise _CrashInsideStep(effect)
        return ok


class Session:
    """One loaded Run behind the protocol."""

    def __init__(self, engine_cls: type[Engine] = Engine) -> None:
        self.engine_cls = engine_cls
        self.eng: Engine | None = None
        self.program: Any = None
        self.world: HostWorld | None = None
        #: the durable journal: every step as it commits (what survives a crash)
        self.durable: list[list[dict[str, Any]]] = []

    def load(self, req: dict[str, Any]) -> dict[str, Any]:
        from loopc.interpreter.runner import verify_artifact

        version = req.get("protocol", 1)
        if version != PROTOCOL_VERSION:
            return {"ok": False, "error": f"protocol version {json.dumps(version)} is not supported "
                                          f"(this runtime speaks {PROTOCOL_VERSION})"}
        raw = req.get("artifact")
        if not isinstance(raw, str):
            return {"ok": False, "error": "load needs 'artifact' (the artifact text)"}
        run = req.get("run")
        if run is not None and (not isinstance(run, str) or not run):
            return {"ok": False, "error": "'run' must be a non-empty string (the Run id)"}
        crashes = req.get("crashes") or []
        unknown = [c for c in crashes if c not in CRASH_POINTS] if isinstance(crashes, list) else [crashes]
        if unknown:
            return {"ok": False, "error": f"unknown crash point(s) {json.dumps(unknown)} (known: {list(CRASH_POINTS)})"}
        art, why = verify_artifact(raw.encode("utf-8"))
        if art is None:
            return {"ok": False, "error": f"artifact refused: {why}"}
        self.program = load_program(art)
        faults = req.get("faults") or {}
        self.world = self._make_world(faults, crashes)
        self.durable = []
        self.eng = self.engine_cls(self.program, self.world, on_step=self._committed)
        eng = self.eng
        self._host(lambda: eng.start(req.get("input") or {}, parse_instant(req.get("start", "2026-01-01T00:00:00Z")),
                                     run_id=run))
        return {"ok": True, "protocol": PROTOCOL_VERSION}

    def _make_world(self, faults: Mapping[str, Any], crashes: list[str]) -> HostWorld:
        """The world of a loaded Run (a subclass may serve another one)."""
        return HostWorld(faults.get("deliveries") or {}, faults.get("transport") or {},
                         crash_after_submit="afterEffectSubmit" in crashes)

    def _committed(self, eng: Engine) -> None:
        """A step committed: it is durable from now on."""
        while len(self.durable) < len(eng.steps):
            self.durable.append(eng.steps[len(self.durable)])

    def _recover(self) -> None:
        """Drop every in-memory structure and rebuild the Run from the
        durable journal's text alone."""
        from loopc.interpreter.runner import dump_journal, parse_journal, resume

        self.eng = None
        text = dump_journal(self.durable)
        self.eng = resume(self.program, parse_journal(text), self.world, engine_cls=self.engine_cls,
                          on_step=self._committed)

    def _host(self, fn: Any) -> Any:
        """Run ``fn`` (one request's work on the engine) as a durable host
        would: a simulated crash inside a step loses that step, then the
        Run recovers from the steps committed so far and carries on."""
        try:
            return fn()
        except _CrashInsideStep:
            while True:
                try:
                    self._recover()
                    return None
                except _CrashInsideStep:
                    continue  # recovery reached the next effect's first submission

    def event(self, req: dict[str, Any]) -> dict[str, Any]:
        from loopc.interpreter.clock import VirtualClock
        from loopc.interpreter.runner import Report, _apply

        if self.eng is None:
            return {"applied": False, "reason": "no Run loaded"}
        ev = req.get("event") or {}
        if not isinstance(ev, dict) or len(ev) != 1:
            return {"applied": False, "reason": "an event is an object with one key"}
        (kind, args), = ev.items()
        index = int(req.get("index", 0))
        if kind == "crash":
            self._host(self._recover)
            return {"applied": True, "reason": None}
        if kind == "advance":
            # the driver's target instant must not move the Run's clock
            # backwards (docs/conformance.md#protocol): refused, not applied
            try:
                to = parse_instant(req["to"])
                start = to - _duration(args)
            except (KeyError, TypeError, ValueError, ArithmeticError, EvaluationError) as exc:
                return {"applied": False, "reason": f"advance needs 'to' (an instant) and a duration: {exc}"}
            if start < self.eng.now:
                return {"applied": False,
                        "reason": f"advance to {req['to']} by {args} would move the Run's clock backwards "
                                  f"(it is at {format_instant(self.eng.now)})"}
            clock = VirtualClock(start)
            e = Event(index, kind, {"duration": args})
        else:
            clock = VirtualClock(self.eng.now)
            e = Event(index, kind, dict(args or {}))
        rep = Report()
        eng = self.eng
        try:
            out = self._host(lambda: _apply(eng, e, clock, lambda: None, rep))
        except JournalDivergence as exc:  # pragma: no cover - reference engine is consistent
            return {"applied": False, "reason": str(exc)}
        if out is None:  # crashed inside a step after the input committed: it applied
            return {"applied": True, "reason": None}
        return {"applied": out["applied"], "reason": out["reason"]}

    def report(self) -> dict[str, Any]:
        from loopc.interpreter.runner import _count_attempts

        eng = self.eng
        if eng is None:
            return {"status": None}
        return {"status": eng.status, "output": eng.output, "error": eng.error, "state": dict(eng.state),
                "visits": dict(sorted(eng.visits.items())), "attempts": dict(sorted(_count_attempts(eng).items())),
                "journal": eng.records(), "deliveries": list(self.world.log) if self.world is not None else []}


def _duration(text: str) -> Any:
    from loopc.interpreter.clock import duration_seconds

    return duration_seconds(text)


def serve_requests(stdin: IO[str], stdout: IO[str], answer: Callable[[Any, dict[str, Any]], dict[str, Any]]) -> int:
    """The protocol's line framing (docs/conformance.md#protocol): one JSON
    request per line on ``stdin``, one JSON answer per line on ``stdout``.
    ``answer(op, request)`` answers every op but ``quit``, which this loop
    answers ``{"ok": true}`` before returning 0; a request that is not JSON,
    not an object, or whose answer raises gets ``{"error": ...}``, never a
    traceback. Returns 0 at ``quit`` or end of input."""
    for line in stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            op = req.get("op") if isinstance(req, dict) else None
            if op == "quit":
                stdout.write(json.dumps({"ok": True}) + "\n")
                stdout.flush()
                return 0
            resp = answer(op, req if isinstance(req, dict) else {})
        except Exception as exc:  # noqa: BLE001 - the protocol answers, it does not crash
            resp = {"error": f"{type(exc).__name__}: {exc}"}
        stdout.write(json.dumps(resp, ensure_ascii=False, sort_keys=True) + "\n")
        stdout.flush()
    return 0


def serve(stdin: IO[str], stdout: IO[str], engine_cls: type[Engine] = Engine) -> int:
    """Serve requests until ``quit`` or end of input; never raises on a bad
    request (it answers ``{"error": ...}``)."""
    session = Session(engine_cls)

    def answer(op: Any, req: dict[str, Any]) -> dict[str, Any]:
        if op == "load":
            return session.load(req)
        if op == "event":
            return session.event(req)
        if op == "report":
            return session.report()
        return {"error": f"unknown op {op!r}"}

    return serve_requests(stdin, stdout, answer)


if __name__ == "__main__":
    sys.exit(serve(sys.stdin, sys.stdout))
