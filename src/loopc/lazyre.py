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

_METHODS = ("match", "fullmatch", "search", "finditer", "findall", "sub", "subn", "split", "scanner")


class _LazyPattern:
    __slots__ = ("_source", "__dict__")

    def __init__(self, pattern: Any, flags: int) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:  # only for what is not set yet: before the first use
        compiled = re.compile(*self._source)
        for method in _METHODS:
            self.__dict__[method] = getattr(compiled, method)
        self.__dict__["_compiled"] = compiled
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazyre.compile({self._source[0]!r})"


def compile(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:  # noqa: A001 - re.compile's name
    """``re.compile(pattern, flags)``, done when the pattern is first used."""
    return cast("re.Pattern[AnyStr]", _LazyPattern(pattern, flags))
