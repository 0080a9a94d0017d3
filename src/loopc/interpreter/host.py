"""The interpreter's public host API (docs/api.md#the-interpreters-host-api):
what a runtime that hosts the reference engine (``loopc.durable``) may use.

A host drives :class:`Engine` through its inputs (``start``, ``callback``,
``decide``, ``advance``, ``cancel``) and queries (``status``, ``output``,
``error``, ``state``, ``find_open``, ``check_callback``, ``effect_key``,
``terminal``), answers deliveries through a :class:`World`, persists
committed steps from ``on_step`` and rebuilds a Run with :func:`resume` or
:func:`restore`.  Everything here is re-exported from its defining module;
this module adds only :func:`next_timer_due`, :func:`waiting_for`,
:func:`effect_of`, :func:`input_problems` and :func:`program_from_artifact`.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from loopc.interpreter.clock import EPOCH, format_instant, parse_instant
from loopc.interpreter.engine import DEFAULT_BUDGET, Act, Budget, Engine, JournalDivergence, World
from loopc.interpreter.program import Program, load_program
from loopc.interpreter.protocol import HostWorld as ProtocolWorld
from loopc.interpreter.protocol import Session as ProtocolSession
from loopc.interpreter.protocol import serve_requests
from loopc.interpreter.runner import INPUT_KINDS, dump_journal, restore, resume, verify_artifact
from loopc.interpreter.schemas import PROTOCOL_VERSION
from loopc.interpreter.values import contract_problems
from loopc.interpreter.values import is_id as is_member_id

__all__ = ["Act", "Budget", "DEFAULT_BUDGET", "EPOCH", "Engine", "INPUT_KINDS", "JournalDivergence", "Program",
           "World", "dump_journal", "effect_of", "waiting_for", "format_instant", "next_timer_due", "parse_instant",
           "input_problems", "program_from_artifact", "restore", "resume", "PROTOCOL_VERSION", "ProtocolSession",
           "ProtocolWorld", "serve_requests", "is_member_id"]


def program_from_artifact(data: bytes) -> tuple[Program | None, str | None]:
    """Strictly verify artifact bytes (decode + digest recomputation) and
    build the executable program: ``(program, None)`` or ``(None, why)``."""
    art, why = verify_artifact(data)
    if art is None:
        return None, why
    return load_program(art), None


def next_timer_due(eng: Engine) -> Decimal | None:
    """The instant (seconds since :data:`EPOCH`) of the Run's earliest live
    timer, or ``None`` when no timer is scheduled: a host sleeps until then
    and calls :meth:`Engine.advance`."""
    due = [d for d, _, tid in eng.timers if tid in eng.timer_info and eng.timer_info[tid][3]]
    return min(due) if due else None


def waiting_for(eng: Engine) -> list[dict[str, Any]]:
    """What the Run waits for, in activation order, then timers by due
    instant: ``{"kind": "callback" | "approval", "node", "act", "attempt",
    "item"}`` for each activation awaiting an outside event (``item`` the
    WorkItem key under a fan_out, else ``None``), and ``{"kind": "timer",
    "timer": "retry" | "wait" | "timeout" | ..., "node", "act", "due"}`` for
    each live timer (``due`` an RFC 3339 instant).  ``[]`` for an ended Run."""
    if eng.terminal:
        return []
    out: list[dict[str, Any]] = []
    for a in eng.open.values():
        if a.status == "awaiting":
            kind = "approval" if a.node.op == "request_approval" else "callback"
            item = next((f[3] for f in reversed(a.ctx) if f[0] == "fan_out"), None)
            out.append({"kind": kind, "node": a.node.id, "act": a.id, "attempt": a.attempt, "item": item})
    for due, _, tid in sorted(eng.timers):
        info = eng.timer_info.get(tid)
        if info is None or not info[3]:
            continue
        owner = eng.acts.get(info[0])
        out.append({"kind": "timer", "timer": info[1], "node": owner.node.id if owner is not None else None,
                    "act": info[0],
                    "due": format_instant(due)})
    return out


def effect_of(eng: Engine, effect: str) -> dict[str, Any] | None:
    """What a :class:`World` needs to perform effect ``effect`` (an
    ``eff_N`` id passed to ``World.deliver``): ``{"act", "attempt", "node",
    "op", "request", "key"}`` — ``op`` the node's opcode (the catalog's
    action type), ``request`` the ``effect.reserved`` record's request,
    ``key`` the effect identity key ``<run>:<activation>:<attempt>``.
    ``None`` for an effect the engine does not know."""
    ref = eng.effects.get(effect)
    if ref is None:
        return None
    a = eng.acts.get(ref[0])
    if a is None:
        return None
    return {"act": a.id, "attempt": ref[1], "node": a.node.id, "op": a.node.op, "request": dict(a.request),
            "key": f"{eng.run_id}:{a.id}:{ref[1]}"}


def input_problems(program: Program, plan_input: Any) -> list[str]:
    """Why ``plan_input`` does not match the Plan input contract (unknown,
    missing or mistyped fields, with a did-you-mean), one message each, in
    field order; ``[]`` when it matches."""
    return [msg for _, msg in contract_problems(plan_input, program.input, "input")]
