"""Token sequence of a switch condition (docs/reference.md#node-switch):
the unit in which the switch checks compare conditions
(:mod:`loopc.analyzer.switches`) and the condition prover names a free atom
(:mod:`loopc.analyzer.conditions`).  Both import it from here, so neither
imports the other back (tests/test_import_cycles.py).
"""
from __future__ import annotations

from loopc import lazyre

__all__ = ["tokens"]

# compiled on first use: a plan without a switch never needs it
_TOKEN = lazyre.compile(r"""\s*('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|&&|\|\||[!=<>]=|[()\[\],!<>]|[^\s()\[\],!<>=&|'"]+)""")


def tokens(text: str) -> tuple[str, ...] | None:
    """The condition's token sequence (whitespace-insensitive, string
    literals verbatim), or None when it does not tokenize."""
    out: list[str] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            return None
        out.append(m.group(1))
        pos = m.end()
    return tuple(out)
