"""Compile-only inventory over a tree of plans (docs/plan.md#inventory).

:func:`inventory` plans every file with :func:`loopc.plan.api.plan_file`
(nothing executes) and reports, per plan, the selected profile, rejection
reasons, capability blockers, the bound proof and the step count, plus
totals per profile.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import attrs

from loopc.plan.catalog import Catalog
from loopc.plan.derive import PROFILES


@attrs.frozen
class InventoryItem:
    path: str
    profile: str | None
    rejections: tuple[str, ...]
    blockers: tuple[dict[str, Any], ...]
    bounds: dict[str, Any] | None
    steps: int
    identity: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "profile": self.profile,
            "rejections": list(self.rejections),
            "blockers": [dict(b) for b in self.blockers],
            "bounds": self.bounds,
            "steps": self.steps,
            "planIdentity": self.identity,
        }


@attrs.frozen
class InventoryReport:
    items: tuple[InventoryItem, ...]
    unreadable: tuple[tuple[str, str], ...] = ()

    def totals(self) -> dict[str, int]:
        t = {p: 0 for p in PROFILES}
        t["rejected"] = 0
        for i in self.items:
            t[i.profile or "rejected"] += 1
        return t

    def to_json(self) -> dict[str, Any]:
        return {
            "plans": [i.to_json() for i in self.items],
            "totals": self.totals(),
            "unreadable": [{"path": p, "message": m} for p, m in self.unreadable],
        }

    @property
    def rejected(self) -> int:
        """How many plans were rejected with an error (the ``rejected`` total)."""
        return sum(1 for i in self.items if i.profile is None)

    def to_text(self) -> str:
        out = []
        for i in self.items:
            if i.profile is None:
                out.append(f"{i.path}: rejected — {i.rejections[0] if i.rejections else 'no plan'}")
                continue
            b = i.bounds or {}
            first = ""
            if i.blockers:
                x = i.blockers[0]
                first = f"; not bounded_atomic: {x['node'] or 'plan'} {x['field']}={x['value']}"
            out.append(
                f"{i.path}: {i.profile}, {i.steps} steps, ≤{b.get('activations')} activations, "
                f"≤{b.get('effects')} effects{first}"
            )
        t = self.totals()
        out.append("totals: " + ", ".join(f"{k} {v}" for k, v in t.items()))
        return "\n".join(out)


def inventory(
    paths: Iterable[str | tuple[str, bytes]],
    *,
    catalog: Catalog | None = None,
    on_file: Callable[[str], None] | None = None,
) -> InventoryReport:
    """Plan every path (read with :func:`~loopc.plan.api.plan_file`) or
    ``(path, source bytes)`` pair (planned with
    :func:`~loopc.plan.api.plan_source`, nothing read); unreadable files are
    listed, never raised.  ``on_file`` is called after each file (progress
    reporting)."""
    from loopc.plan.api import plan_file, plan_source

    items = []
    bad = []
    for entry in paths:
        p = entry if isinstance(entry, str) else entry[0]
        try:
            res = (
                plan_file(p, catalog=catalog)
                if isinstance(entry, str)
                else plan_source(entry[1], catalog=catalog, path=p)
            )
        except OSError as exc:
            bad.append((p, exc.strerror or str(exc)))
            if on_file:
                on_file(p)
            continue
        plan = res.plan
        rejections = tuple(
            f"{d.code} {'-' if d.span is None else f'{d.span.line}:{d.span.column}'} {d.message}"
            for d in res.diagnostics
            if d.is_error
        )
        blockers: tuple[dict[str, Any], ...] = ()
        if plan is not None:
            more = [
                q
                for q in PROFILES
                if q != plan.profile and PROFILES.index(q) < PROFILES.index(plan.profile or PROFILES[-1])
            ]
            blockers = tuple(
                b.to_json() | {"profile": q} for q in more for b in plan.profiles[q].blockers if q == "bounded_atomic"
            )
        items.append(
            InventoryItem(
                p,
                plan.profile if plan is not None and res.ok else None,
                rejections,
                blockers,
                plan.bounds.to_json() if plan is not None else None,
                len(plan.steps) if plan is not None else 0,
                plan.identity if plan is not None and res.ok else None,
            )
        )
        if on_file:
            on_file(p)
    return InventoryReport(tuple(items), tuple(bad))
