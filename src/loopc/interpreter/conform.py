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
           "delivery_divergences", "load_request", "verifier_cases", "verifier_suite", "reference_runtime_argv", "REPORT_FIELDS", "DEFAULT_REPLY_TIMEOUT_S", "DEFAULT_REPLY_LIMIT"]

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


def _schema_divs(name: str, value: Any, base: str, what: str) -> list[dict[str, Any]]:
    from loopc.interpreter.schemas import problems

    return [_div(base + ptr, None, None, f"{what}{' at ' + ptr if ptr else ''}: not as the protocol schema "
                                         f"says ({name}): {msg}")
            for ptr, msg in problems(name, value)]


def load_request(prep: Prepared, *, crashes: tuple[str, ...] = (), artifact: str | None = None) -> dict[str, Any]:
    """The ``load`` request of a scenario (protocol version
    :data:`~loopc.interpreter.schemas.PROTOCOL_VERSION`)."""
    from loopc.interpreter.runner import run_id_of
    from loopc.interpreter.schemas import PROTOCOL_VERSION

    sc = prep.scenario
    run = run_id_of(prep)
    req: dict[str, Any] = {"op": "load", "protocol": PROTOCOL_VERSION,
                           "artifact": prep.artifact_bytes.decode("utf-8") if artifact is None else artifact,
                           "input": sc.input, "faults": {"deliveries": sc.deliveries, "transport": sc.transport},
                           "start": format_instant(VirtualClock().now), "crashes": list(crashes)}
    if run is not None:
        req["run"] = run
    return req


def delivery_divergences(want_journal: list[dict[str, Any]], got: Any, *, crashed: bool) -> list[dict[str, Any]]:
    """Check the report's ``deliveries`` (every submission of an effect to
    the world) against the reference journal: each carries its effect's
    identity key (``effect.reserved``'s ``key``), the effects come in the
    reference's delivery order, each submitted once — twice with the
    ``afterEffectSubmit`` crash point (before the crash and after recovery)."""
    if not isinstance(got, list):
        return []  # the schema check reports it
    keys = {r["effect"]: r["key"] for r in want_journal if r.get("kind") == "effect.reserved"}
    order = [r["effect"] for r in want_journal if r.get("kind") in ("effect.delivered", "effect.failed")]
    out: list[dict[str, Any]] = []
    seen: list[str] = []
    counts: dict[str, int] = {}
    for i, d in enumerate(got):
        if not isinstance(d, dict):
            continue  # the schema check reports it
        eff, key = d.get("effect"), d.get("key")
        if not isinstance(eff, str) or eff not in keys:
            out.append(_div(f"/deliveries/{i}/effect", None, eff,
                            f"delivery {i + 1}: effect {_show(eff)} is not in the reference journal"))
            continue
        if not isinstance(key, str) or key != keys[eff]:
            out.append(_div(f"/deliveries/{i}/key", keys[eff], key,
                            f"delivery {i + 1} of {eff}: key {_show(key)}, but its identity key is "
                            f"{_show(keys[eff])} (every submission of an effect carries the same key)"))
        if not seen or seen[-1] != eff:
            seen.append(eff)
        counts[eff] = counts.get(eff, 0) + 1
    if [e for e in seen if e in keys] != order:
        out.append(_div("/deliveries", order, seen, f"deliveries: effects submitted in the order {_show(seen)}, "
                                                    f"the reference delivers {_show(order)}"))
    want_n = 2 if crashed else 1
    for eff in order:
        n = counts.get(eff, 0)
        if n != want_n and seen == order:
            why = " (once before the crash inside its delivery step, once after recovery)" if crashed else ""
            out.append(_div("/deliveries", want_n, n, f"deliveries: {eff} submitted {n} time(s), expected "
                                                      f"{want_n}{why}"))
    return out


def conform_prepared(prep: Prepared, argv: list[str], runtime: RuntimeProcess | None = None, *,
                     timeout: float = DEFAULT_REPLY_TIMEOUT_S, reply_limit: int = DEFAULT_REPLY_LIMIT,
                     budget: Budget = DEFAULT_BUDGET, crash_variants: bool = True) -> dict[str, Any]:
    """Check one scenario: once as scripted, and (``crash_variants``) once
    more with the ``afterEffectSubmit`` crash point, whose journal must equal
    the crash-free one.  ``runtime`` reuses a running process (each
    ``load`` starts a new Run), else one is started and stopped here with
    the given reply bounds.  ``budget`` bounds the reference Run
    (docs/conformance.md#budgets)."""
    ref = run_prepared(prep, budget=budget)
    want_journal = _strip_markers(ref.journal)
    divs: list[dict[str, Any]] = []
    variants: list[tuple[str, ...]] = [()] + ([("afterEffectSubmit",)] if crash_variants else [])

    def result() -> dict[str, Any]:
        return {"conforms": not divs, "divergences": divs, "divergence": divs[0]["message"] if divs else None,
                "records": len(want_journal), "variants": ["+".join(v) or "plain" for v in variants]}

    try:
        rt = runtime or RuntimeProcess(argv, timeout=timeout, reply_limit=reply_limit)
    except RuntimeError_ as exc:
        divs.append(_div("", None, None, str(exc)))
        return result()
    try:
        for crashes in variants:
            found = _one_variant(prep, ref, want_journal, rt, crashes)
            label = "+".join(crashes)
            for d in found:
                d["variant"] = label or "plain"
                if label:
                    d["message"] = f"[crash {label}] {d['message']}"
            divs.extend(found)
            if rt.dead is not None:
                break
    finally:
        if runtime is None:
            rt.close()
    return result()


def _one_variant(prep: Prepared, ref: Any, want_journal: list[dict[str, Any]], rt: RuntimeProcess,
                 crashes: tuple[str, ...]) -> list[dict[str, Any]]:
    sc = prep.scenario
    divs: list[dict[str, Any]] = []
    shape: list[dict[str, Any]] = []  # schema violations, kept where no value divergence says more
    try:
        resp = rt.ask(load_request(prep, crashes=crashes))
        if not isinstance(resp, dict) or resp.get("ok") is not True:
            why = resp.get("error") if isinstance(resp, dict) else f"a {json_type(resp)}"
            divs.append(_div("/load", True, resp, f"load refused: {_show(why)}"))
            return divs
        shape.extend(_schema_divs("loadReply", resp, "/load", "load reply"))
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
            shape.extend(_schema_divs("eventReply", resp, f"/events/{ev.index}", f"event {ev.index} reply"))
        rep = rt.ask({"op": "report"})
    except RuntimeError_ as exc:
        divs.append(_div("", None, None, str(exc)))
        return _merge(divs, shape)
    if not isinstance(rep, dict):
        divs.append(_div("", None, None, f"the report is a {json_type(rep)}, not an object"))
        return _merge(divs, shape)
    shape.extend(_schema_divs("reportReply", rep, "", "report"))
    got_journal = rep.get("journal", MISSING)
    if isinstance(got_journal, list):
        divs.extend(journal_divergences(want_journal, _strip_markers(got_journal)))
    for key in REPORT_FIELDS:
        divs.extend(_field_divs(getattr(ref, key), rep.get(key, MISSING), f"/{key}", key))
    divs.extend(delivery_divergences(want_journal, rep.get("deliveries"), crashed=bool(crashes)))
    return _merge(divs, shape)


def _merge(divs: list[dict[str, Any]], shape: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Value divergences, then each schema violation that no value
    divergence already covers (same pointer, or below or above one); an
    ``applied`` divergence covers its event reply."""
    def covers(a: str, b: str) -> bool:
        return a == b or b.startswith(a + "/") or a.startswith(b + "/") if a and b else False

    seen = [d["at"].removesuffix("/applied") if d["at"].startswith("/events/") else d["at"] for d in divs]
    return divs + [s for s in shape if not any(covers(a, s["at"]) for a in seen)]


# ---------------------------------------------------------------- the verifier suite

def verifier_cases(artifact: bytes) -> list[tuple[str, str, str]]:
    """Artifacts a runtime must refuse, made from a valid one: ``(case,
    what is wrong, canonical artifact text)`` — a digest that does not match
    the content, an unknown artifact version (digest recomputed), and a
    semantically corrupt plan whose digest matches (an edge into a node
    that does not exist)."""
    import copy

    from loopc.ir.canonical import canonical_bytes
    from loopc.ir.digest import semantic_digest

    base = json.loads(artifact)
    out = []
    bad = copy.deepcopy(base)
    bad["digest"] = "sha256:" + ("0" * 64 if not base["digest"].endswith("0" * 64) else "1" * 64)
    out.append(("digest_mismatch", "the digest does not match the content", bad))
    bad = copy.deepcopy(base)
    bad["artifactVersion"] = "loop.plan.artifact/v99"
    bad["digest"] = semantic_digest(bad)
    out.append(("unknown_version", "artifactVersion loop.plan.artifact/v99 (digest recomputed)", bad))
    bad = copy.deepcopy(base)
    plan = bad["plan"]
    if plan.get("edges"):
        plan["edges"][0]["to"]["node"] = "no_such_node"
        what = "an edge into a node that does not exist (digest recomputed)"
    else:
        plan["entry"]["node"] = "no_such_node"
        what = "an entry node that does not exist (digest recomputed)"
    bad["digest"] = semantic_digest(bad)
    out.append(("semantically_corrupt", what, bad))
    return [(case, what, canonical_bytes(obj).decode("utf-8")) for case, what, obj in out]


def verifier_suite(prep: Prepared, rt: RuntimeProcess) -> list[dict[str, Any]]:
    """Hand the runtime every :func:`verifier_cases` artifact in a ``load``
    and check that it refuses each (``{"ok": false, "error": ...}``):
    ``[{"case", "what", "refused", "divergence"}]``."""
    out = []
    for case, what, text in verifier_cases(prep.artifact_bytes):
        entry: dict[str, Any] = {"case": case, "what": what, "refused": False, "divergence": None}
        try:
            resp = rt.ask(load_request(prep, artifact=text))
        except RuntimeError_ as exc:
            entry["divergence"] = str(exc)
            out.append(entry)
            break
        if isinstance(resp, dict) and resp.get("ok") is False and isinstance(resp.get("error"), str):
            entry["refused"] = True
        else:
            entry["divergence"] = (f"{case}: the runtime accepted an artifact it must refuse ({what}); "
                                   f"it answered {_show(resp)}")
        out.append(entry)
    return out


def conform_file(path: str, argv: list[str], runtime: RuntimeProcess | None = None,
                 **options: Any) -> dict[str, Any] | list[ScenarioProblem]:
    """:func:`conform_prepared` on a scenario file, or its problems (a
    malformed scenario or plan, or one the reference cannot run)."""
    from loopc.diagnostics import Span

    prep = prepare_file(path)
    if isinstance(prep, list):
        return prep
    try:
        return conform_prepared(prep, argv, runtime, **options)
    except ValueError as exc:  # a value outside the documented domain that the loader let through
        return [ScenarioProblem(path, Span(1, 1, 1, 2), f"the scenario cannot be run: {exc}", "scenario.invalid")]


def reference_runtime_argv() -> list[str]:
    """The reference interpreter behind the protocol."""
    import sys

    return [sys.executable, "-m", "loopc.interpreter.protocol"]
