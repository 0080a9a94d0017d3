"""Scenario files (docs/conformance.md#scenario-format): strict loading and
validation with positions.

``load_scenario(text_or_bytes, path=None)`` → :class:`Scenario` or a list
of :class:`ScenarioProblem` (never raises on bad input).  YAML is read by
loopc's own YAML layer (:mod:`loopc.compiler.yamlload`: the same size,
nesting and node budgets as plan sources, duplicate keys, anchors and tags
rejected); JSON is valid YAML.
"""
from __future__ import annotations

from typing import Any

import attrs

from loopc.compiler.yamlnodes import YMap, YNode, YScalar, YSeq
from loopc.diagnostics import Span
from loopc.ir.evaluator import EvaluationError, duration_value
from loopc.limits import MAX_DURATION_DAYS, duration_problem

__all__ = ["Scenario", "Event", "ScenarioProblem", "load_scenario", "EVENT_KINDS", "STATUSES"]

STATUSES = ("succeeded", "failed", "cancelled", "waiting")
EVENT_KINDS = ("callback", "approve", "reject", "advance", "cancel", "crash", "expectStatus")
TOP_KEYS = ("plan", "input", "faults", "events", "expect")
FAULT_KEYS = ("deliveries", "transport")
EXPECT_KEYS = ("status", "output", "error", "state", "visits", "attempts", "outputStatuses")
EVENT_FIELDS = {
    "callback": ("node", "item", "attempt", "output", "fail", "workItems", "rejected"),
    "approve": ("node", "item", "attempt", "by", "comment", "rejected"),
    "reject": ("node", "item", "attempt", "by", "comment", "rejected"),
    "cancel": (),
    "crash": (),
}
ITEM_STATUSES = ("succeeded", "failed", "timed_out", "blocked", "cancelled")


@attrs.frozen
class ScenarioProblem:
    """A malformed scenario: a message at a 1-based line/column."""

    path: str
    span: Span
    message: str
    code: str = "scenario.invalid"

    def render(self) -> str:
        return f"{self.path}:{self.span.line}:{self.span.column}: error[{self.code}]: {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.span.line, "column": self.span.column,
                "endLine": self.span.end_line, "endColumn": self.span.end_column, "code": self.code,
                "message": self.message}


@attrs.frozen
class Event:
    """One scripted event: ``kind`` one of :data:`EVENT_KINDS`; ``args`` the
    plain mapping (``advance``: ``{"duration": ...}``, ``expectStatus``:
    ``{"status": ...}``); ``line`` its position."""

    index: int
    kind: str
    args: dict[str, Any]
    line: int = 0

    @property
    def expect_rejected(self) -> bool:
        return bool(self.args.get("rejected"))

    def to_json(self) -> dict[str, Any]:
        if self.kind == "advance":
            return {"advance": self.args["duration"]}
        if self.kind == "expectStatus":
            return {"expectStatus": self.args["status"]}
        return {self.kind: dict(self.args)}


@attrs.frozen
class Scenario:
    """A validated scenario; ``input_spans`` maps a path under ``input``
    (keys and indices) to the span of that value in the scenario file, so
    that a mismatch with the Plan input is reported where it is written
    (:meth:`span_of`)."""

    path: str
    plan: str
    input: dict[str, Any]
    deliveries: dict[str, int]
    transport: dict[str, int]
    events: tuple[Event, ...]
    expect: dict[str, Any]
    input_spans: dict[tuple[Any, ...], Span] = attrs.field(factory=dict, eq=False, repr=False)

    def span_of(self, path: tuple[Any, ...]) -> Span:
        """The span of the value at ``path`` under ``input``, else of its
        nearest written ancestor, else the start of the file."""
        from loopc.interpreter.values import KEY

        if path and path[-1] == KEY and path in self.input_spans:
            return self.input_spans[path]
        path = tuple(p for p in path if p != KEY)
        for n in range(len(path), -1, -1):
            sp = self.input_spans.get(tuple(path[:n]))
            if sp is not None:
                return sp
        return Span(1, 1, 1, 2)


def load_scenario(src: str | bytes, path: str | None = None) -> Scenario | list[ScenarioProblem]:
    """Parse and validate one scenario."""
    from loopc.compiler.report import Reporter
    from loopc.compiler.yamlload import load

    name = path or "<scenario>"
    reporter = Reporter()
    doc = load(src, reporter, path=path)
    problems = [ScenarioProblem(name, d.span or Span(1, 1, 1, 2), d.message, d.code) for d in reporter.diagnostics
                if d.severity.value == "error"]
    if problems:
        return problems
    if doc is None or doc.root is None:
        return [ScenarioProblem(name, Span(1, 1, 1, 2), "the scenario is empty")]
    api = doc.root.get("apiVersion") if isinstance(doc.root, YMap) else None
    if isinstance(api, YScalar) and isinstance(api.value, str) and api.value.startswith("loop.plan/"):
        # a plan given where a scenario is expected: one problem, not one per key
        return [ScenarioProblem(name, api.span, f"this is a plan ({api.value}), not a scenario: loopc run "
                                "takes a scenario that names its plan (docs/conformance.md#scenario-format); "
                                "to check a plan, run loopc check", "scenario.not_a_scenario")]
    v = _Validator(name)
    sc = v.scenario(doc.root)
    if v.problems or sc is None:
        return sorted(v.problems, key=lambda p: (p.span.line, p.span.column))
    return sc


#: How far one scenario may move the virtual clock, all ``advance`` events
#: together: 100 of the longest durations (365,000 days, 1,000 years), so
#: that every instant a Run reaches or schedules is a real RFC 3339 time.
MAX_ADVANCE_DAYS = 100 * MAX_DURATION_DAYS
MAX_ADVANCE_SECONDS = MAX_ADVANCE_DAYS * 86_400


class _Validator:
    def __init__(self, path: str) -> None:
        self.path = path
        self.problems: list[ScenarioProblem] = []
        self.advanced = 0  # seconds moved by the advance events so far (whole seconds, rounded up)

    def bad(self, at: YNode | None, msg: str, code: str = "scenario.invalid") -> None:
        span = at.span if at is not None else Span(1, 1, 1, 2)
        self.problems.append(ScenarioProblem(self.path, span, msg, code))

    def mapping(self, n: YNode, what: str, allowed: tuple[str, ...]) -> YMap | None:
        if not isinstance(n, YMap):
            self.bad(n, f"{what} must be a mapping")
            return None
        for k, kn, _ in n.pairs():
            if k not in allowed:
                hint = _close(k, allowed)
                self.bad(kn, f"unknown key '{k}' in {what}" + (f"; did you mean '{hint}'?" if hint else
                                                                  f" (allowed: {', '.join(allowed) or 'none'})"),
                         "scenario.unknown_key")
        return n

    def numbers(self, root: YNode) -> None:
        """Every number in the scenario must be one every runtime reads the
        same way (docs/conformance.md#numbers): I-JSON integers within
        ±(2^53−1), finite decimals of at most 17 significant digits, and no
        value that rounds to zero or infinity though its text is not zero."""
        from loopc.compiler.wireforms import number_problem
        from loopc.limits import number_text_problem

        stack: list[YNode] = [root]
        while stack:
            n = stack.pop()
            if isinstance(n, YMap):
                stack.extend(v for _, _, v in reversed(list(n.pairs())))
            elif isinstance(n, YSeq):
                stack.extend(reversed(n.items))
            elif isinstance(n, YScalar) and n.value.__class__ in (int, float) and n.style == "":
                why = number_text_problem(n.raw) if n.raw[:1] in "0123456789-+." else None
                why = why or number_problem(n.value)
                if why is None and n.value == 0 and any(c in "123456789" for c in _mantissa(n.raw)):
                    why = f"number {n.raw} is not zero but rounds to zero in a double (out of range)"
                if why is not None:
                    self.bad(n, f"{why}; scenario numbers follow the plan's bounds (I-JSON)", "scenario.number")

    def scenario(self, root: YNode) -> Scenario | None:
        self.numbers(root)
        m = self.mapping(root, "the scenario", TOP_KEYS)
        if m is None:
            return None
        plan_n = m.get("plan")
        plan = ""
        if plan_n is None:
            self.bad(root, "missing required key 'plan' (the plan source, relative to the scenario file)",
                     "scenario.missing_key")
        elif not (isinstance(plan_n, YScalar) and isinstance(plan_n.value, str) and plan_n.value):
            self.bad(plan_n, "'plan' must be a non-empty path string")
        else:
            plan = plan_n.value
        inp: dict[str, Any] = {}
        spans: dict[tuple[Any, ...], Span] = {}
        if "input" in m:
            n = m.get("input")
            assert n is not None
            if not isinstance(n, YMap):
                self.bad(n, "'input' must be a mapping (the Plan input)")
            else:
                inp = n.to_data()
                spans = _spans(n)
        deliveries: dict[str, int] = {}
        transport: dict[str, int] = {}
        if "faults" in m:
            fm = self.mapping(m.get("faults"), "'faults'", FAULT_KEYS)  # type: ignore[arg-type]
            if fm is not None:
                for key, dest in (("deliveries", deliveries), ("transport", transport)):
                    dn = fm.get(key)
                    if dn is None:
                        continue
                    if not isinstance(dn, YMap):
                        self.bad(dn, f"'faults.{key}' must map node ids to counts")
                        continue
                    for k, vn in dn.entries():
                        if isinstance(vn, YScalar) and type(vn.value) is int and 0 <= vn.value <= 1000:
                            dest[k] = vn.value
                        else:
                            self.bad(vn, f"'faults.{key}.{k}' must be an integer from 0 to 1000")
        events: list[Event] = []
        en = m.get("events")
        if en is not None:
            if not isinstance(en, YSeq):
                self.bad(en, "'events' must be a list")
            else:
                for i, item in enumerate(en.items):
                    ev = self.event(i, item)
                    if ev is not None:
                        events.append(ev)
        expect: dict[str, Any] = {}
        xn = m.get("expect")
        if xn is None:
            self.bad(root, "missing required key 'expect'", "scenario.missing_key")
        else:
            expect = self.expect(xn)
        return Scenario(self.path, plan, inp, deliveries, transport, tuple(events), expect, spans)

    def event(self, i: int, n: YNode) -> Event | None:
        if not isinstance(n, YMap) or len(n.keys()) != 1:
            self.bad(n, f"event {i} must be a mapping with exactly one key, one of: {', '.join(EVENT_KINDS)}")
            return None
        (kind, kn, vn), = list(n.pairs())
        if kind not in EVENT_KINDS:
            hint = _close(kind, EVENT_KINDS)
            self.bad(kn, f"unknown event '{kind}'" + (f"; did you mean '{hint}'?" if hint else ""),
                     "scenario.unknown_event")
            return None
        if kind == "advance":
            if not (isinstance(vn, YScalar) and isinstance(vn.value, str)):
                self.bad(vn, "'advance' takes a duration such as PT1H")
                return None
            problem = duration_problem(vn.value)
            if problem is not None:
                shown = vn.value if len(vn.value) <= 40 else vn.value[:20] + "…"
                self.bad(vn, f"'{shown}' is not a duration 'advance' accepts: {problem}")
                return None
            try:
                seconds = duration_value(vn.value)
            except EvaluationError:  # pragma: no cover - duration_problem accepted it
                self.bad(vn, f"'{vn.value}' is not a duration (P[nD][T[nH][nM][n[.f]S]])")
                return None
            self.advanced += -int(-seconds // 1)
            if self.advanced > MAX_ADVANCE_SECONDS:
                self.bad(vn, f"the 'advance' events up to here move the clock more than {MAX_ADVANCE_DAYS:,} "
                             "days (1,000 years), the most one scenario may")
                return None
            return Event(i, kind, {"duration": vn.value}, n.span.line)
        if kind == "expectStatus":
            if not (isinstance(vn, YScalar) and vn.value in STATUSES):
                self.bad(vn, f"'expectStatus' takes one of: {', '.join(STATUSES)}" + _did_you_mean(vn, STATUSES))
                return None
            return Event(i, kind, {"status": vn.value}, n.span.line)
        if kind in ("cancel", "crash") and isinstance(vn, YScalar) and vn.value is None:
            return Event(i, kind, {}, n.span.line)
        m = self.mapping(vn, f"'{kind}'", EVENT_FIELDS[kind])
        if m is None:
            return None
        args = m.to_data()
        if kind in ("cancel", "crash"):
            return Event(i, kind, args, n.span.line)
        ok = True
        node = m.get("node")
        if node is None:
            self.bad(vn, f"'{kind}' needs 'node'", "scenario.missing_key")
            ok = False
        elif not (isinstance(node, YScalar) and isinstance(node.value, str)):
            self.bad(node, "'node' must be a node id")
            ok = False
        for key, typ, what in (("item", str, "a WorkItem key"), ("by", str, "a member id"),
                               ("comment", str, "a string"), ("rejected", bool, "true or false")):
            x = m.get(key)
            if x is not None and not (isinstance(x, YScalar) and type(x.value) is typ):
                self.bad(x, f"'{key}' must be {what}")
                ok = False
        at = m.get("attempt")
        if at is not None and not (isinstance(at, YScalar) and type(at.value) is int and at.value >= 1):
            self.bad(at, "'attempt' must be a positive integer")
            ok = False
        if kind == "callback":
            has_out, has_fail = "output" in m, "fail" in m
            if has_out and has_fail:
                self.bad(vn, "a callback has either 'output' or 'fail', not both")
                ok = False
            if "output" in m and not isinstance(m.get("output"), YMap):
                self.bad(m.get("output"), "'output' must be a mapping")
                ok = False
            if has_fail:
                fm = self.mapping(m.get("fail"), "'fail'", ("code", "detail"))  # type: ignore[arg-type]
                if fm is None:
                    ok = False
                else:
                    c = fm.get("code")
                    if not (isinstance(c, YScalar) and isinstance(c.value, str) and c.value):
                        self.bad(c or fm, "'fail.code' must be a non-empty string")
                        ok = False
                    d = fm.get("detail")
                    if d is not None and not (isinstance(d, YScalar) and isinstance(d.value, str)):
                        self.bad(d, "'fail.detail' must be a string")
                        ok = False
            if "workItems" in m and not isinstance(m.get("workItems"), YSeq):
                self.bad(m.get("workItems"), "'workItems' must be a list of WorkItems")
                ok = False
        return Event(i, kind, args, n.span.line) if ok else None

    def expect(self, n: YNode) -> dict[str, Any]:
        m = self.mapping(n, "'expect'", EXPECT_KEYS)
        if m is None:
            return {}
        out: dict[str, Any] = {}
        st = m.get("status")
        if st is None:
            self.bad(n, "'expect' needs 'status'", "scenario.missing_key")
        elif not (isinstance(st, YScalar) and st.value in STATUSES):
            self.bad(st, f"'expect.status' must be one of: {', '.join(STATUSES)}" + _did_you_mean(st, STATUSES))
        else:
            out["status"] = st.value
        for key in ("output", "state"):
            x = m.get(key)
            if x is not None:
                if not isinstance(x, YMap):
                    self.bad(x, f"'expect.{key}' must be a mapping")
                else:
                    out[key] = x.to_data()
        e = m.get("error")
        if e is not None:
            em = self.mapping(e, "'expect.error'", ("code", "detail"))
            if em is not None:
                out["error"] = em.to_data()
        for key in ("visits", "attempts"):
            x = m.get(key)
            if x is None:
                continue
            if not isinstance(x, YMap):
                self.bad(x, f"'expect.{key}' must map node ids to counts")
                continue
            d: dict[str, int] = {}
            for k, vn in x.entries():
                if isinstance(vn, YScalar) and type(vn.value) is int and vn.value >= 0:
                    d[k] = vn.value
                else:
                    self.bad(vn, f"'expect.{key}.{k}' must be a non-negative integer")
            out[key] = d
        x = m.get("outputStatuses")
        if x is not None:
            if not isinstance(x, YMap):
                self.bad(x, "'expect.outputStatuses' must map output fields to status lists")
            else:
                d2: dict[str, list[str]] = {}
                for k, vn in x.entries():
                    if not isinstance(vn, YSeq):
                        self.bad(vn, f"'expect.outputStatuses.{k}' must be a list of: {', '.join(ITEM_STATUSES)}")
                        continue
                    good = True
                    for i, sn in enumerate(vn.items):
                        if not (isinstance(sn, YScalar) and sn.value in ITEM_STATUSES):
                            self.bad(sn, f"'expect.outputStatuses.{k}[{i}]' must be one of: {', '.join(ITEM_STATUSES)}"
                                     + _did_you_mean(sn, ITEM_STATUSES))
                            good = False
                    if good:
                        d2[k] = [sn.value for sn in vn.items]  # type: ignore[attr-defined]
                out["outputStatuses"] = d2
        return out


def _close(word: str, options: tuple[str, ...]) -> str | None:
    from loopc.interpreter.values import close_match

    return close_match(word, options)


def _did_you_mean(n: YNode, options: tuple[str, ...]) -> str:
    hint = _close(n.value, options) if isinstance(n, YScalar) and isinstance(n.value, str) else None
    return f"; did you mean '{hint}'?" if hint else ""


def _mantissa(raw: str) -> str:
    """The digits of a number's text before its exponent."""
    return raw.lower().split("e", 1)[0]


def _spans(root: YMap) -> dict[tuple[Any, ...], Span]:
    """Path (keys, indices) → span of every value under ``root``; a path
    ending in :data:`~loopc.interpreter.values.KEY` → the span of that key."""
    from loopc.interpreter.values import KEY

    out: dict[tuple[Any, ...], Span] = {(): root.span}
    stack: list[tuple[tuple[Any, ...], YNode]] = [((), root)]
    while stack:
        path, n = stack.pop()
        if isinstance(n, YMap):
            for k, kn, v in n.pairs():
                out[path + (k,)] = v.span
                out[path + (k, KEY)] = kn.span
                stack.append((path + (k,), v))
        elif isinstance(n, YSeq):
            for i, v in enumerate(n.items):
                out[path + (i,)] = v.span
                stack.append((path + (i,), v))
    return out
