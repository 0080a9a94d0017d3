"""Bounds on numbers and durations, shared by the source checker and the
artifact verifier (docs/language.md#numbers-and-durations-bounds).

One place so that what ``check`` accepts and what ``verify`` accepts agree:
a duration the compiler lets through is one every runtime can hold, and a
number in an artifact is one every JSON implementation reads the same way
(I-JSON, RFC 7493 §2.2).  Pure functions over text; no loopc imports (this
module sits below :mod:`loopc.compiler` and :mod:`loopc.ir`).

* integers: within ±(2^53−1) (:data:`MAX_SAFE_INTEGER`);
* any number literal: at most :data:`MAX_NUMBER_CHARS` characters (sign,
  digits, leading zeros, point and exponent included) — longer literals are
  rejected *before* conversion, so no digit string reaches Python's
  4,300-digit ``int``/``str`` conversion limit;
* decimals: at most :data:`MAX_SIGNIFICANT_DIGITS` significant digits (what
  an IEEE 754 double keeps; more would be silently rounded) and finite;
* durations (ISO 8601 ``P[nD][T[nH][nM][n[.f]S]]``): at most
  :data:`MAX_DURATION_CHARS` characters, at most
  :data:`MAX_DURATION_FRACTION_DIGITS` fractional-second digits, and a total
  of at most :data:`MAX_DURATION_SECONDS` (3,650 days).
"""
from __future__ import annotations

import re

from loopc import lazyre

#: The source budget of one plan, in bytes (1 MiB; docs/reference.md#budgets).
MAX_SOURCE_BYTES = 1024 * 1024
MAX_SAFE_INTEGER = 2**53 - 1
MAX_NUMBER_CHARS = 64
MAX_SIGNIFICANT_DIGITS = 17
MAX_DURATION_DAYS = 3650
MAX_DURATION_SECONDS = MAX_DURATION_DAYS * 86_400
MAX_DURATION_CHARS = 64
MAX_DURATION_FRACTION_DIGITS = 9

DURATION_RE = re.compile(
    r"P(?:(?P<d>[0-9]+)D)?"
    r"(?:T(?:(?P<h>[0-9]+)H)?(?:(?P<m>[0-9]+)M)?(?:(?P<s>[0-9]+)(?:\.(?P<f>[0-9]+))?S)?)?\Z"
)
_DECIMAL_RE = lazyre.compile(r"[-+]?(?P<int>[0-9]*)(?:\.(?P<frac>[0-9]*))?(?:[eE](?P<exp>[-+]?[0-9]+))?\Z")


def _shown(text: str) -> str:
    return text if len(text) <= 40 else f"{text[:20]}…"


def number_text_problem(text: str) -> str | None:
    """Why the numeric literal ``text`` (YAML core-schema, JSON or expression
    syntax) is out of bounds, or ``None``.  Only the length and the
    significant digits are judged here (cheap, before any conversion); the
    integer range and finiteness are judged on the converted value by the
    callers.  Never raises."""
    n = len(text)
    if n > MAX_NUMBER_CHARS:
        return (f"a number literal of {n:,} characters is over the limit of {MAX_NUMBER_CHARS} "
                f"characters ({_shown(text)})")
    m = _DECIMAL_RE.match(text)
    if m is None or (m.group("frac") is None and m.group("exp") is None):
        return None  # an integer (range-checked on its value) or not decimal
    digits = (m.group("int") + (m.group("frac") or "")).lstrip("0").rstrip("0")
    if len(digits) > MAX_SIGNIFICANT_DIGITS:
        return (f"number {text} has {len(digits)} significant digits; at most {MAX_SIGNIFICANT_DIGITS} "
                "are kept by a double, so write it with fewer")
    return None


def underflow_problem(text: str, value: object) -> str | None:
    """Why the decimal literal ``text`` that converted to ``value`` is out of
    range because it is not zero but rounds to zero in a double (``1e-400``),
    or ``None``.  Out of range like an integer beyond ±(2^53−1): every
    runtime would read 0 (docs/language.md#numbers-and-durations-bounds)."""
    if value != 0 or value.__class__ is not float:
        return None
    m = _DECIMAL_RE.match(text)
    if m is None or not any(c in "123456789" for c in (m.group("int") or "") + (m.group("frac") or "")):
        return None
    return f"number {_shown(text)} is not zero but rounds to zero in a double: out of range"


def duration_parts(s: str) -> tuple[int, int, int, int, str] | None:
    """(days, hours, minutes, whole seconds, fraction digits) of a
    well-formed duration whose text fits :data:`MAX_DURATION_CHARS`, else
    ``None``.  At least one component; no empty ``T`` part."""
    if s.__class__ is not str or len(s) > MAX_DURATION_CHARS:
        return None
    m = DURATION_RE.match(s)
    if m is None or s.endswith("T"):
        return None
    d, h, mi, sec, frac = m.group("d", "h", "m", "s", "f")
    if d is None and h is None and mi is None and sec is None:
        return None
    return int(d or 0), int(h or 0), int(mi or 0), int(sec or 0), frac or ""


def duration_problem(s: str) -> str | None:
    """Why ``s`` is not an accepted duration (``None`` when it is): not the
    ISO 8601 form, longer than :data:`MAX_DURATION_CHARS`, more than
    :data:`MAX_DURATION_FRACTION_DIGITS` fractional digits, or longer than
    :data:`MAX_DURATION_SECONDS` in total.  Never raises."""
    if s.__class__ is not str:
        return "not a string"
    if len(s) > MAX_DURATION_CHARS:
        return f"a duration of {len(s):,} characters is over the limit of {MAX_DURATION_CHARS}"
    parts = duration_parts(s)
    if parts is None:
        return "not an ISO 8601 duration P[nD][T[nH][nM][n[.f]S]]"
    d, h, mi, sec, frac = parts
    if len(frac) > MAX_DURATION_FRACTION_DIGITS:
        return (f"{len(frac)} fractional-second digits; at most {MAX_DURATION_FRACTION_DIGITS} "
                "(nanoseconds)")
    total = d * 86_400 + h * 3_600 + mi * 60 + sec + (1 if frac.strip("0") else 0)
    if total > MAX_DURATION_SECONDS:
        return f"longer than the maximum of {MAX_DURATION_DAYS:,} days, P{MAX_DURATION_DAYS}D"
    return None


def is_duration(s: object) -> bool:
    """``s`` is a well-formed duration within the bounds above."""
    return s.__class__ is str and duration_problem(s) is None


def duration_seconds(s: str) -> float | None:
    """Length of an accepted duration in seconds, ``None`` otherwise."""
    if not is_duration(s):
        return None
    parts = duration_parts(s)
    assert parts is not None
    d, h, mi, sec, frac = parts
    return d * 86_400 + h * 3_600 + mi * 60 + sec + (float("0." + frac) if frac else 0.0)
