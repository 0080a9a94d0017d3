"""Regular expressions compiled on first use (docs/architecture.md#value-classes).

``re.compile`` at module level runs on every start whether or not the
pattern is ever used: on the path of ``loopc check FILE`` 31 module-level
patterns, ~3 ms, were compiled and never matched for a clean plan (the
output escaper, the plan-file sniffer, date-time literals, ...).
:func:`compile` returns a stand-in that compiles the pattern the first time
one of its attributes is read and from then on hands out the compiled
pattern's own bound methods (an instance attribute each), so a used
pattern costs what a compiled one does.

Use it for a pattern that is only called through its methods (``match``,
``search``, ``sub``, ``finditer``, ...): the stand-in is not an instance of
:class:`re.Pattern`, so do not pass it to ``re.match(pattern, ...)`` or
``isinstance``.
"""

from __future__ import annotations

import re
from typing import Any, AnyStr, cast

__all__ = ["compile"]

#: what a stand-in hands out once compiled: the methods, bound to the pattern, and its attributes
_ATTRIBUTES = ("match", "fullmatch", "search", "finditer", "findall", "sub", "subn", "split", "scanner",
               "pattern", "flags", "groups", "groupindex")


class _Pattern:
    """A stand-in: once compiled (:class:`_Compiled`), the pattern's methods
    and attributes are instance attributes, read by a plain lookup (a class
    with ``__getattr__``, as :class:`_LazyPattern` has, looks up slower)."""

    __slots__ = ("_source", "__dict__")

    def __init__(self, pattern: Any, flags: int) -> None:
        self._source = (pattern, flags)

    def __repr__(self) -> str:
        return f"lazyre.compile({self._source[0]!r})"


class _Compiled(_Pattern):
    __slots__ = ()


class _LazyPattern(_Pattern):
    __slots__ = ()

    def __getattr__(self, name: str) -> Any:  # only before the first use: compile, then become _Compiled
        compiled = re.compile(*self._source)
        for name_ in _ATTRIBUTES:
            self.__dict__[name_] = getattr(compiled, name_)
        self.__dict__["_compiled"] = compiled
        self.__class__ = _Compiled  # type: ignore[assignment]
        return getattr(compiled, name)


def compile(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:  # noqa: A001 - re.compile's name
    """``re.compile(pattern, flags)``, done when the pattern is first used."""
    return cast("re.Pattern[AnyStr]", _LazyPattern(pattern, flags))
