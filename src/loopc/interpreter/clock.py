"""Virtual clock and exact durations (docs/language.md#run-semantics).

Instants are exact :class:`~decimal.Decimal` seconds since the Run epoch
``2026-01-01T00:00:00Z``; durations are exact seconds (``P1D`` = 86,400 s,
no calendar arithmetic: the duration syntax has no years, months or weeks).
Nothing here reads the wall clock.
"""
from __future__ import annotations

import datetime as _dt
from decimal import ROUND_FLOOR, Decimal

from loopc.ir.evaluator import EvaluationError, duration_value

__all__ = ["EPOCH", "VirtualClock", "duration_seconds", "format_instant", "parse_instant", "EvaluationError"]

#: The Run epoch: every scenario's virtual clock starts here.
EPOCH = _dt.datetime(2026, 1, 1, tzinfo=_dt.timezone.utc)
_EPOCH_TS = int(EPOCH.timestamp())
_NS_PER_S = Decimal(1_000_000_000)


def duration_seconds(text: str) -> Decimal:
    """``PT1H`` → ``Decimal(3600)``; raises :class:`EvaluationError` when
    ``text`` is not a duration of the ``P[nD][T[nH][nM][n[.f]S]]`` form."""
    return duration_value(text)


def format_instant(t: Decimal) -> str:
    """Seconds since the epoch → RFC 3339 UTC text: ``YYYY-MM-DDTHH:MM:SS``,
    then a fraction of at most 9 digits with trailing zeros trimmed (none
    for a whole second), then ``Z`` (docs/conformance.md#the-journal).
    Instants finer than a nanosecond are truncated toward the past; the
    engine never makes one (durations have at most 9 fraction digits)."""
    ns = int((Decimal(t) * _NS_PER_S).to_integral_value(rounding=ROUND_FLOOR))
    whole, frac_ns = divmod(ns, 1_000_000_000)
    d = EPOCH + _dt.timedelta(seconds=whole)
    s = d.strftime("%Y-%m-%dT%H:%M:%S")
    if frac_ns:
        s += "." + f"{frac_ns:09d}".rstrip("0")
    return s + "Z"


def parse_instant(text: str) -> Decimal:
    """Inverse of :func:`format_instant` for any RFC 3339 instant."""
    from loopc.ir.evaluator import datetime_value

    return datetime_value(text)[0] - _EPOCH_TS


class VirtualClock:
    """A world clock for scenarios: starts at ``start`` seconds after the
    epoch (0 = 2026-01-01T00:00:00Z) and moves only by :meth:`advance`."""

    def __init__(self, start: Decimal | int = 0) -> None:
        self.now = Decimal(start)

    def advance(self, duration: str) -> Decimal:
        self.now += duration_seconds(duration)
        return self.now
