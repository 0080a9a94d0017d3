"""Invariant monitor: checked after every committed step (tests install it as
the engine's ``on_step`` hook; docs/conformance.md#invariants).

Invariants (each violation raises :class:`InvariantViolation`):

* one arrival per owner activation and branch (``join.arrived``);
* in-flight fan-out items ≤ ``maxConcurrency``, and exactly the running items
  hold a slot;
* a blocked item's ``blockedBy`` equals the source-ordered root blockers
  recomputed from its dependencies;
* a loop never exceeds its iteration count and an exit by ``continue`` happens
  exactly at iteration N;
* no ``run.completed`` while a token, open activation or scope is live;
* per-field state versions increase by exactly one per write;
* one effect per (activation, attempt): transport retries reuse it;
* a quiescent Run that is not terminal still has live work (nothing stranded);
* records are sequence-ordered with no gap.
"""
from __future__ import annotations

from typing import Any

__all__ = ["InvariantViolation", "Monitor"]


class InvariantViolation(AssertionError):
    """An invariant of the Run rules does not hold after a step."""


class Monitor:
    """Stateful checker; one instance per Run (survives resume because it
    reads only the steps it has not seen)."""

    def __init__(self) -> None:
        self._eng: Any = None
        self.checks = 0
        self._reset()

    def _reset(self) -> None:
        self.seen_steps = 0  # steps of the Run checked (journal positions, across restores)
        self.arrivals: set[tuple[str, str]] = set()
        self.versions: dict[str, int] = {}
        self.effects: dict[tuple[str, int], str] = {}
        self.last_seq = 0

    def __call__(self, eng: Any) -> None:
        if eng is not self._eng:
            self._eng = eng
            if eng.base == 0:  # a Run resumed from its journal re-executes from step 1: check it all again
                self._reset()
            elif self.seen_steps < eng.base:  # installed after the checkpoint: start there
                self._reset()
                self.seen_steps = eng.base
                self.last_seq = eng.steps[0][0]["seq"] - 1 if eng.steps else eng._seq
            # restored from a checkpoint: the steps up to it were checked; re-executed ones are
            # identical to the journal (compared by the engine), so only new steps are read
        self.checks += 1
        total = eng.base + len(eng.steps)
        new = eng.steps[max(0, self.seen_steps - eng.base):] if total > self.seen_steps else []
        self.seen_steps = max(self.seen_steps, total)
        for step in new:
            for r in step:
                self._record(eng, r)
        self._state(eng)

    def fail(self, msg: str) -> None:
        raise InvariantViolation(msg)

    def _record(self, eng: Any, r: dict[str, Any]) -> None:
        if r["seq"] != self.last_seq + 1:
            self.fail(f"journal sequence gap: {self.last_seq} then {r['seq']}")
        self.last_seq = r["seq"]
        k = r["kind"]
        if k == "join.arrived":
            key = (r["act"], r["branch"])
            if key in self.arrivals:
                self.fail(f"two arrivals for branch {r['branch']} of join activation {r['act']}")
            self.arrivals.add(key)
        elif k == "state.written":
            prev = self.versions.get(r["field"], 0)
            if r["version"] != prev + 1:
                self.fail(f"state field {r['field']} version {r['version']} after {prev}")
            self.versions[r["field"]] = r["version"]
        elif k in ("effect.reserved",):
            key = (r["act"], r["attempt"])
            if key in self.effects:
                self.fail(f"a second effect for {key}: {self.effects[key]} then {r['effect']}")
            self.effects[key] = r["effect"]
        elif k == "effect.transport_retry":
            key = (r["act"], r["attempt"])
            if self.effects.get(key) != r["effect"]:
                self.fail(f"transport retry of {key} uses effect {r['effect']}, not {self.effects.get(key)}")
        elif k == "loop.exited":
            lp = eng.loops.get(r["act"])
            if r["via"] == "continue" and lp is not None and r["iteration"] != lp.n:
                self.fail(f"loop {r['act']} exited by continue at iteration {r['iteration']} of {lp.n}")
        elif k == "run.completed" and r["status"] == "succeeded" and eng.live:
            self.fail("the Run completed while work is still live")

    def _state(self, eng: Any) -> None:
        for fo in eng.fanouts.values():
            if len(fo.in_flight) > fo.max:
                self.fail(f"fan-out {fo.act}: {len(fo.in_flight)} in-flight items > maxConcurrency {fo.max}")
            running = [k for k in fo.order if fo.status[k] == "running"]
            if sorted(running) != sorted(fo.in_flight):
                self.fail(f"fan-out {fo.act}: slots held by {fo.in_flight}, running items {running}")
            pos = {k: i for i, k in enumerate(fo.order)}
            for k in fo.order:
                if fo.status[k] != "blocked":
                    continue
                roots: list[str] = []
                for d in fo.items[k]["dependsOn"]:
                    if fo.status[d] == "blocked":
                        roots.extend(fo.envelopes[d]["blockedBy"])
                    elif fo.status[d] != "succeeded":
                        roots.append(d)
                want = sorted(dict.fromkeys(roots), key=pos.__getitem__)
                if fo.envelopes[k]["blockedBy"] != want:
                    self.fail(f"item {k}: blockedBy {fo.envelopes[k]['blockedBy']} != root blockers {want}")
        for lp in eng.loops.values():
            if lp.iteration > lp.n or lp.traversals > lp.n:
                self.fail(f"loop {lp.act} at iteration {lp.iteration} of {lp.n}")
        if not eng.ready and not eng.terminal and not eng.open and not eng._cur:
            if eng.final is None:
                self.fail("stranded: the Run is not terminal and has no live work")
