"""The conformance JSON-lines protocol (docs/conformance.md#protocol).

:func:`serve` runs the reference interpreter behind the protocol on a pair
of text streams (``python -m loopc.interpreter.protocol`` serves stdin and
stdout).  One request object per line, one response object per line:

* ``{"op": "load", "artifact": <canonical artifact text>, "input": {...},
  "faults": {"deliveries": {...}, "transport": {...}}}`` →
  ``{"ok": true}`` | ``{"ok": false, "error": "..."}``;
* ``{"op": "event", "index": i, "event": {<scenario event>}}`` (an
  ``advance`` also carries ``"to"``, the target instant) →
  ``{"applied": bool, "reason": str | null}``;
* ``{"op": "report"}`` → ``{"status", "output", "error", "state", "visits",
  "attempts", "journal"}``;
* ``{"op": "quit"}`` → ``{"ok": true}`` and the server exits.

A ``crash`` event must make the runtime drop every in-memory structure and
continue from its journal alone.
"""
from __future__ import annotations

import json
import sys
from typing import IO, Any

from loopc.interpreter.clock import format_instant, parse_instant
from loopc.interpreter.engine import Engine, JournalDivergence
from loopc.interpreter.program import load_program
from loopc.interpreter.scenario import Event
from loopc.ir.evaluator import EvaluationError

__all__ = ["serve", "Session"]


class Session:
    """One loaded Run behind the protocol."""

    def __init__(self, engine_cls: type[Engine] = Engine) -> None:
        self.engine_cls = engine_cls
        self.eng: Engine | None = None
        self.program: Any = None
        self.world: Any = None
        self.journal_text = ""

    def load(self, req: dict[str, Any]) -> dict[str, Any]:
        from loopc.interpreter.runner import ScenarioWorld, verify_artifact

        raw = req.get("artifact")
        if not isinstance(raw, str):
            return {"ok": False, "error": "load needs 'artifact' (the artifact text)"}
        art, why = verify_artifact(raw.encode("utf-8"))
        if art is None:
            return {"ok": False, "error": f"artifact refused: {why}"}
        self.program = load_program(art)
        faults = req.get("faults") or {}
        self.world = ScenarioWorld(faults.get("deliveries") or {}, faults.get("transport") or {})
        self.eng = self.engine_cls(self.program, self.world)
        self.eng.start(req.get("input") or {}, parse_instant(req.get("start", "2026-01-01T00:00:00Z")))
        self._persist()
        return {"ok": True}

    def _persist(self) -> None:
        from loopc.interpreter.runner import dump_journal

        assert self.eng is not None
        self.journal_text = dump_journal(self.eng.steps)

    def event(self, req: dict[str, Any]) -> dict[str, Any]:
        from loopc.interpreter.clock import VirtualClock
        from loopc.interpreter.runner import Report, _apply, parse_journal, resume

        if self.eng is None:
            return {"applied": False, "reason": "no Run loaded"}
        ev = req.get("event") or {}
        if not isinstance(ev, dict) or len(ev) != 1:
            return {"applied": False, "reason": "an event is an object with one key"}
        (kind, args), = ev.items()
        index = int(req.get("index", 0))
        if kind == "crash":
            self.eng = None  # drop all memory
            self.eng = resume(self.program, parse_journal(self.journal_text), self.world,
                              engine_cls=self.engine_cls)
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
        try:
            out = _apply(self.eng, e, clock, lambda: None, rep)
        except JournalDivergence as exc:  # pragma: no cover - reference engine is consistent
            return {"applied": False, "reason": str(exc)}
        self._persist()
        return {"applied": out["applied"], "reason": out["reason"]}

    def report(self) -> dict[str, Any]:
        from loopc.interpreter.runner import _count_attempts

        eng = self.eng
        if eng is None:
            return {"status": None}
        return {"status": eng.status, "output": eng.output, "error": eng.error, "state": dict(eng.state),
                "visits": dict(sorted(eng.visits.items())), "attempts": dict(sorted(_count_attempts(eng).items())),
                "journal": eng.records()}


def _duration(text: str) -> Any:
    from loopc.interpreter.clock import duration_seconds

    return duration_seconds(text)


def serve(stdin: IO[str], stdout: IO[str], engine_cls: type[Engine] = Engine) -> int:
    """Serve requests until ``quit`` or end of input; never raises on a bad
    request (it answers ``{"error": ...}``)."""
    session = Session(engine_cls)
    for line in stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            op = req.get("op")
            if op == "load":
                resp = session.load(req)
            elif op == "event":
                resp = session.event(req)
            elif op == "report":
                resp = session.report()
            elif op == "quit":
                stdout.write(json.dumps({"ok": True}) + "\n")
                stdout.flush()
                return 0
            else:
                resp = {"error": f"unknown op {op!r}"}
        except Exception as exc:  # noqa: BLE001 - the protocol answers, it does not crash
            resp = {"error": f"{type(exc).__name__}: {exc}"}
        stdout.write(json.dumps(resp, ensure_ascii=False, sort_keys=True) + "\n")
        stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(serve(sys.stdin, sys.stdout))
