"""``loopc conform``: drive an external runtime over the JSON-lines protocol
(:mod:`loopc.interpreter.protocol`) and compare it with the reference
interpreter (docs/conformance.md#checking-another-runtime).

:func:`conform_prepared` returns ``{"conforms": bool, "divergence": str |
None, "records": n}``: the first diverging event outcome, journal record or
final field.  Process handling (spawn, pipes, per-response timeout) lives
in :class:`RuntimeProcess`.
"""
from __future__ import annotations

import json
import selectors
import subprocess
from typing import Any

from loopc.interpreter.clock import VirtualClock, format_instant
from loopc.interpreter.engine import DEFAULT_BUDGET, Budget
from loopc.interpreter.runner import Prepared, prepare_file, run_prepared, strip_markers

__all__ = ["RuntimeProcess", "RuntimeError_", "conform_prepared", "conform_file", "first_divergence"]

RESPONSE_TIMEOUT_S = 20.0


class RuntimeError_(Exception):
    """The runtime under test did not answer (exited, timed out, bad JSON)."""


class RuntimeProcess:
    """A runtime under test: one JSON request per line on its stdin, one
    JSON response per line on its stdout."""

    def __init__(self, argv: list[str]) -> None:
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL, text=True, bufsize=1)
        except OSError as exc:
            raise RuntimeError_(f"cannot start runtime {argv!r}: {exc.strerror or exc}") from None
        self.sel = selectors.DefaultSelector()
        assert self.proc.stdout is not None
        self.sel.register(self.proc.stdout, selectors.EVENT_READ)

    def ask(self, req: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(json.dumps(req, ensure_ascii=False) + "\n")
            self.proc.stdin.flush()
        except OSError:
            raise RuntimeError_("the runtime closed its input") from None
        if not self.sel.select(RESPONSE_TIMEOUT_S):
            raise RuntimeError_(f"no answer to {req.get('op')} within {RESPONSE_TIMEOUT_S:.0f} s")
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError_("the runtime exited")
        try:
            obj = json.loads(line)
        except ValueError:
            raise RuntimeError_(f"the runtime answered with invalid JSON: {line[:200]!r}") from None
        if not isinstance(obj, dict):
            raise RuntimeError_("the runtime answered with a non-object")
        return obj

    def close(self) -> None:
        try:
            self.ask({"op": "quit"})
        except RuntimeError_:
            pass
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def first_divergence(want: list[dict[str, Any]], got: Any) -> str | None:
    """The first journal record that differs, as a readable sentence."""
    if not isinstance(got, list):
        return "the runtime reported no journal list"
    for i in range(max(len(want), len(got))):
        w = want[i] if i < len(want) else None
        g = got[i] if i < len(got) else None
        if w != g:
            return (f"journal record {i + 1}: expected {json.dumps(w, sort_keys=True)}, "
                    f"runtime {json.dumps(g, sort_keys=True)}")
    return None


def conform_prepared(prep: Prepared, argv: list[str], runtime: RuntimeProcess | None = None, *,
                     budget: Budget = DEFAULT_BUDGET) -> dict[str, Any]:
    """Check one scenario; ``runtime`` reuses a running process (each
    ``load`` starts a new Run), else one is started and stopped here.
    ``budget`` bounds the reference Run (docs/conformance.md#budgets)."""
    ref = run_prepared(prep, budget=budget)
    want_journal = strip_markers(ref.journal)
    sc = prep.scenario
    try:
        rt = runtime or RuntimeProcess(argv)
    except RuntimeError_ as exc:
        return {"conforms": False, "divergence": str(exc), "records": 0}
    try:
        resp = rt.ask({"op": "load", "artifact": prep.artifact_bytes.decode("utf-8"), "input": sc.input,
                       "faults": {"deliveries": sc.deliveries, "transport": sc.transport},
                       "start": format_instant(VirtualClock().now)})
        if resp.get("ok") is not True:
            return {"conforms": False, "divergence": f"load refused: {resp.get('error')}", "records": 0}
        clock = VirtualClock()
        ref_events = {e["index"]: e for e in ref.events}
        for ev in sc.events:
            if ev.kind == "expectStatus":
                continue
            req: dict[str, Any] = {"op": "event", "index": ev.index, "event": ev.to_json()}
            if ev.kind == "advance":
                req["to"] = format_instant(clock.advance(ev.args["duration"]))
            resp = rt.ask(req)
            want = ref_events.get(ev.index, {})
            if bool(resp.get("applied")) != bool(want.get("applied")):
                return {"conforms": False, "records": 0,
                        "divergence": f"event {ev.index} ({ev.kind}): reference applied={want.get('applied')}, "
                                      f"runtime applied={resp.get('applied')} ({resp.get('reason')})"}
        rep = rt.ask({"op": "report"})
    except RuntimeError_ as exc:
        return {"conforms": False, "divergence": str(exc), "records": 0}
    finally:
        if runtime is None:
            rt.close()
    got = rep.get("journal")
    div = first_divergence(want_journal, strip_markers(got) if isinstance(got, list) else got)
    if div is None:
        for key in ("status", "output", "error", "state"):
            w = getattr(ref, key)
            if rep.get(key) != w:
                div = f"{key}: expected {json.dumps(w, sort_keys=True)}, runtime {json.dumps(rep.get(key), sort_keys=True)}"
                break
    return {"conforms": div is None, "divergence": div, "records": len(want_journal)}


def conform_file(path: str, argv: list[str], runtime: RuntimeProcess | None = None, *,
                 budget: Budget = DEFAULT_BUDGET) -> Any:
    prep = prepare_file(path)
    if isinstance(prep, list):
        return prep
    return conform_prepared(prep, argv, runtime, budget=budget)


def reference_runtime_argv() -> list[str]:
    """The reference interpreter behind the protocol."""
    import sys

    return [sys.executable, "-m", "loopc.interpreter.protocol"]


