"""Did-you-mean suggestions for misspelt names and values (keys, node
types, choices, enum values): one rule, shared by every pass that names
what was expected."""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from loopc import lazyre
from loopc.diagnostics import Applicability, Fix, Span, TextEdit

if TYPE_CHECKING:
    from loopc.compiler.yamlnodes import YScalar

#: Text that means itself inside a quoted YAML scalar and inside either kind
#: of expression quote (no quotes, backslashes, ``#`` or ``: ``).
_QUOTED_SAFE = lazyre.compile(r"\w[\w.\- ]*(?<! )")
#: ... and, as a whole plain scalar, is a string (not a number, boolean or
#: null in YAML 1.1 or 1.2).
_PLAIN_SAFE = lazyre.compile(r"[A-Za-z_][\w.\-]*")
_PLAIN_SPECIAL = frozenset(("true", "false", "yes", "no", "on", "off", "y", "n", "null", "nan", "inf"))


def _one_edit(a: str, b: str) -> bool:
    """``a`` and ``b`` differ by at most one edit: a character substituted,
    inserted or deleted, or two adjacent characters swapped (optimal string
    alignment distance ≤ 1, linear time)."""
    if abs(len(a) - len(b)) > 1:
        return False
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        return (a[i + 1 :] == b[i + 1 :]
                or (a[i : i + 2] == b[i : i + 2][::-1] and a[i + 2 :] == b[i + 2 :]))
    return a[i + 1 :] == b[i:] if len(a) > len(b) else a[i:] == b[i + 1 :]


def suggest(word: str, choices: Iterable[str]) -> str | None:
    """Closest of ``choices`` to ``word`` (case-insensitive match first,
    then one ignoring ``_``/``-``, then difflib ratio ≥ 0.6, then the only
    choice one edit away, a swap of two adjacent characters included), or
    ``None``.

    The last rule is for short words, where one edit is most of the word
    and difflib's ratio stays under its cutoff: ``ot`` for ``to``, ``tp``
    for ``to``, ``nmae`` for ``name``; when two choices are one edit away
    there is no guess."""
    ordered = sorted(choices)
    low = word.lower()
    for c in ordered:
        if c.lower() == low:
            return c
    norm = low.replace("_", "").replace("-", "")
    for c in ordered:
        if c.lower().replace("_", "") == norm:
            return c
    import difflib  # only when no exact or normalised match (start-up: issue 26)

    got = difflib.get_close_matches(word, ordered, 1, 0.6)
    if got:
        return got[0]
    near = [c for c in ordered if _one_edit(low, c.lower())]
    return near[0] if len(near) == 1 else None


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


def writable_in_scalar(text: str, style: str) -> bool:
    """Can ``text`` replace the value of a YAML scalar of ``style`` (``""``
    plain, ``'`` or ``"``) as written, and still be read as that string?"""
    if style in ("'", '"'):
        return _QUOTED_SAFE.fullmatch(text) is not None
    return _PLAIN_SAFE.fullmatch(text) is not None and text.lower() not in _PLAIN_SPECIAL


def enum_fix(value: str, values: Iterable[str], style: str, at: Span) -> Fix | None:
    """The did-you-mean of the misspelt enum value ``value`` as an unsafe
    edit replacing the text at ``at`` (the value's characters, inside any
    quotes of a scalar of ``style``), or ``None`` when nothing is close or
    the suggestion would not read back as itself there
    (:func:`writable_in_scalar`)."""
    near = enum_suggestion(value, values)
    if near is None or not writable_in_scalar(near, style):
        return None
    return Fix(f"replace with `{near}`", (TextEdit(at, near),), Applicability.UNSAFE)


#: The plain scalars YAML 1.1 reads as booleans and YAML 1.2 (loopc) as strings.
_YAML11_BOOLS = {w: v for ws, v in ((("y", "yes", "on"), "true"), (("n", "no", "off"), "false"))
                 for word in ws for w in (word, word.capitalize(), word.upper())}


def bool_fix(s: YScalar) -> Fix | None:
    """Where ``true``/``false`` is required and ``s`` is a plain scalar YAML
    1.1 reads as a boolean (``yes``, ``Off``, ``Y``...; a string under YAML
    1.2): the safe fix writing that boolean (the one it was written for,
    docs/api.md#diagnostic: Fix.applicability), else ``None``."""
    meant = _YAML11_BOOLS.get(s.value) if s.style == "" and s.value.__class__ is str else None
    if meant is None:
        return None
    return Fix(f"replace with '{meant}'", (TextEdit(s.span, meant),), Applicability.SAFE)
