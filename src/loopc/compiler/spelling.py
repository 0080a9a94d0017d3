"""Did-you-mean suggestions for misspelt names and values (keys, node
types, choices, enum values): one rule, shared by every pass that names
what was expected."""
from __future__ import annotations

import difflib
from typing import Iterable


def suggest(word: str, choices: Iterable[str]) -> str | None:
    """Closest of ``choices`` to ``word`` (case-insensitive match first,
    then one ignoring ``_``/``-``, then difflib ratio ≥ 0.6), or ``None``."""
    ordered = sorted(choices)
    low = word.lower()
    for c in ordered:
        if c.lower() == low:
            return c
    norm = low.replace("_", "").replace("-", "")
    for c in ordered:
        if c.lower().replace("_", "") == norm:
            return c
    got = difflib.get_close_matches(word, ordered, 1, 0.6)
    return got[0] if got else None


def enum_suggestion(value: str, values: Iterable[str]) -> str | None:
    """The enum value :func:`not_an_enum_value` suggests for ``value``, or ``None``."""
    vals = list(values)
    near = suggest(value, vals) if vals else None
    return near if near is not None and near != value else None


def not_an_enum_value(value: str, values: Iterable[str]) -> str:
    """``'hgih' is not one of the enum values (high, low); did you mean
    'high'?`` — the suggestion only when one is close enough."""
    vals = list(values)
    near = enum_suggestion(value, vals)
    hint = f"; did you mean '{near}'?" if near is not None else ""
    return f"'{value}' is not one of the enum values ({', '.join(vals)}){hint}"
