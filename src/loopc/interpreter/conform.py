"""``loopc conform``: drive an external runtime over the JSON-lines protocol
(:mod:`loopc.interpreter.protocol`) and compare it with the reference
interpreter (docs/conformance.md#checking-another-runtime).

:func:`conform_prepared` returns ``{"conforms": bool, "divergences":
[{"at", "expected", "runtime", "message"}...], "divergence": str | None,
"records": n}``: *every* divergence of the scenario — each event's
``applied``, each journal record field by field (``at`` is a JSON pointer
into the report, ``/journal/<index>/<field>...``; a record the runtime
lacks or adds is one divergence), then the report fields — and
``divergence``, the first message (or ``None``).  Values compare with JSON
types (:mod:`loopc.interpreter.jsondiff`).  Reading replies, with their
time and size bounds, lives in :mod:`loopc.interpreter.kitio`.
"""
from __future__ import annotations

import difflib
import json
from typing import Any

from loopc.interpreter.clock import VirtualClock, format_instant
from loopc.interpreter.engine import DEFAULT_BUDGET, Budget
from loopc.interpreter.jsondiff import MISSING, diff, json_type
from loopc.interpreter.kitio import DEFAULT_REPLY_LIMIT, DEFAULT_REPLY_TIMEOUT_S, RuntimeError_, RuntimeProcess
from loopc.interpreter.runner import Prepared, prepare_file, run_prepared
from loopc.interpreter.scenario import ScenarioProblem

__all__ = ["RuntimeProcess", "RuntimeError_", "conform_prepared", "conform_file", "journal_divergences",
           "reference_runtime_argv", "REPORT_FIELDS", "DEFAULT_REPLY_TIMEOUT_S", "DEFAULT_REPLY_LIMIT"]

#: Report fields compared after the journal, in this order.
REPORT_FIELDS = ("status", "output", "error", "state", "visits", "attempts")
#: Above this many records on either side, journals are compared by index
#: only (no alignment), which keeps the comparison linear.
_ALIGN_MAX = 20_000


def _show(v: Any, width: int = 300) -> str:
    if v is MISSING:
        return "(missing)"
    text = json.dumps(v, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= width else text[:width] + "…"


def _div(at: str, expected: Any, got: Any, message: str) -> dict[str, Any]:
    return {"at": at, "expected": None if expected is MISSING else expected,
            "runtime": None if got is MISSING else got, "message": message}


def _field_divs(want: Any, got: Any, base: str, label: str) -> list[dict[str, Any]]:
    out = []
    for ptr, w, g in diff(want, got):
        where = f"{label}{ptr}" if ptr else label
        if w is MISSING:
            msg = f"{where}: not expected, runtime {_show(g)}"
        elif g is MISSING:
            msg = f"{where}: expected {_show(w)}, runtime has none"
        elif json_type(w) != json_type(g):
            msg = f"{where}: expected {json_type(w)} {_show(w)}, runtime {json_type(g)} {_show(g)}"
        else:
            msg = f"{where}: expected {_show(w)}, runtime {_show(g)}"
        out.append(_div(base + ptr, w, g, msg))
    return out


def _kind(r: Any) -> Any:
    return r.get("kind") if isinstance(r, dict) else json_type(r)


def journal_divergences(want: list[dict[str, Any]], got: list[Any]) -> list[dict[str, Any]]:
    """Every difference between the reference journal and the runtime's:
    records are aligned by kind (so one missing or extra record is one
    divergence, not a shifted tail), then compared field by field.
    ``at`` points into the runtime's journal (``/journal/<i>...``), or at
    the reference index for a missing record."""
    out: list[dict[str, Any]] = []

    def pair(i: int, j: int) -> None:
        r = got[j]
        label = f"journal record {j + 1} ({_kind(want[i])})"
        if not isinstance(r, dict):
            out.append(_div(f"/journal/{j}", want[i], r, f"journal record {j + 1}: expected an object "
                                                          f"{_show(want[i])}, runtime {json_type(r)} {_show(r)}"))
            return
        out.extend(_field_divs(want[i], r, f"/journal/{j}", label))

    def missing(i: int, j: int) -> None:
        out.append(_div(f"/journal/{j}", want[i], MISSING,
                        f"journal record {j + 1}: missing, expected {_show(want[i])}"))

    def extra(j: int) -> None:
        out.append(_div(f"/journal/{j}", MISSING, got[j],
                        f"journal record {j + 1}: not in the reference journal: {_show(got[j])}"))

    kw, kg = [_kind(r) for r in want], [_kind(r) for r in got]
    if kw == kg or max(len(want), len(got)) > _ALIGN_MAX:
        for i in range(max(len(want), len(got))):
            if i >= len(got):
                missing(i, i)
            elif i >= len(want):
                extra(i)
            else:
                pair(i, i)
        return out
    sm = difflib.SequenceMatcher(None, [json.dumps(k) for k in kw], [json.dumps(k) for k in kg], autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            for d in range(i2 - i1):
                pair(i1 + d, j1 + d)
            continue
        for i in range(i1, i2):
            missing(i, j1)
        for j in range(j1, j2):
            extra(j)
    return out


def _strip_markers(journal: list[Any]) -> list[Any]:
    return [r for r in journal if not (isinstance(r, dict) and r.get("marker") is True)]


def conform_prepared(prep: Prepared, argv: list[str], runtime: RuntimeProcess | None = None, *,
                     timeout: float = DEFAULT_REPLY_TIMEOUT_S,
                     reply_limit: int = DEFAULT_REPLY_LIMIT, budget: Budget = DEFAULT_BUDGET) -> dict[str, Any]:
    """Check one scenario; ``runtime`` reuses a running process (each
    ``load`` starts a new Run), else one is started and stopped here with
    the given reply bounds.  ``budget`` bounds the reference Run
    (docs/conformance.md#budgets)."""
    ref = run_prepared(prep, budget=budget)
    want_journal = _strip_markers(ref.journal)
    sc = prep.scenario
    divs: list[dict[str, Any]] = []

    def result() -> dict[str, Any]:
        return {"conforms": not divs, "divergences": divs, "divergence": divs[0]["message"] if divs else None,
                "records": len(want_journal)}

    try:
        rt = runtime or RuntimeProcess(argv, timeout=timeout, reply_limit=reply_limit)
    except RuntimeError_ as exc:
        divs.append(_div("", None, None, str(exc)))
        return result()
    try:
        resp = rt.ask({"op": "load", "artifact": prep.artifact_bytes.decode("utf-8"), "input": sc.input,
                       "faults": {"deliveries": sc.deliveries, "transport": sc.transport},
                       "start": format_instant(VirtualClock().now)})
        if not isinstance(resp, dict) or resp.get("ok") is not True:
            why = resp.get("error") if isinstance(resp, dict) else f"a {json_type(resp)}"
            divs.append(_div("/load", True, resp, f"load refused: {_show(why)}"))
            return result()
        clock = VirtualClock()
        ref_events = {e["index"]: e for e in ref.events}
        for ev in sc.events:
            if ev.kind == "expectStatus":
                continue
            req: dict[str, Any] = {"op": "event", "index": ev.index, "event": ev.to_json()}
            if ev.kind == "advance":
                req["to"] = format_instant(clock.advance(ev.args["duration"]))
            resp = rt.ask(req)
            want = bool(ref_events.get(ev.index, {}).get("applied"))
            got = resp.get("applied", MISSING) if isinstance(resp, dict) else MISSING
            if not isinstance(resp, dict) or got is not want:
                reason = resp.get("reason") if isinstance(resp, dict) else None
                shown = f"a {json_type(resp)}" if not isinstance(resp, dict) else (
                    f"{json_type(got)} {_show(got)}" if not isinstance(got, bool) else _show(got))
                divs.append(_div(f"/events/{ev.index}/applied", want, None if got is MISSING else got,
                                 f"event {ev.index} ({ev.kind}): reference applied={_show(want)}, "
                                 f"runtime applied={shown}" + (f" ({_show(reason)})" if reason else "")))
        rep = rt.ask({"op": "report"})
    except RuntimeError_ as exc:
        divs.append(_div("", None, None, str(exc)))
        return result()
    finally:
        if runtime is None:
            rt.close()
    if not isinstance(rep, dict):
        divs.append(_div("", None, None, f"the report is a {json_type(rep)}, not an object"))
        return result()
    got_journal = rep.get("journal", MISSING)
    if not isinstance(got_journal, list):
        divs.append(_div("/journal", None, None, f"the report's journal is {json_type(got_journal)}, not an array"))
    else:
        divs.extend(journal_divergences(want_journal, _strip_markers(got_journal)))
    for key in REPORT_FIELDS:
        divs.extend(_field_divs(getattr(ref, key), rep.get(key, MISSING), f"/{key}", key))
    return result()


def conform_file(path: str, argv: list[str], runtime: RuntimeProcess | None = None,
                 **bounds: Any) -> dict[str, Any] | list[ScenarioProblem]:
    """:func:`conform_prepared` on a scenario file, or its problems (a
    malformed scenario or plan, or one the reference cannot run)."""
    from loopc.diagnostics import Span

    prep = prepare_file(path)
    if isinstance(prep, list):
        return prep
    try:
        return conform_prepared(prep, argv, runtime, **bounds)
    except ValueError as exc:  # a value outside the documented domain that the loader let through
        return [ScenarioProblem(path, Span(1, 1, 1, 2), f"the scenario cannot be run: {exc}", "scenario.invalid")]


def reference_runtime_argv() -> list[str]:
    """The reference interpreter behind the protocol."""
    import sys

    return [sys.executable, "-m", "loopc.interpreter.protocol"]
