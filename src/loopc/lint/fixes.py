"""Applying the fixes diagnostics carry (``loopc check --fix``/``--diff``,
and the language server's "fix all"; docs/ci.md#fixes).  Pure: text in,
text out.

Only fixes whose applicability is *safe* are applied unless ``unsafe`` is
given.  Edits use the diagnostics' coordinates (1-based lines, 1-based
code-point columns, end exclusive; lines break at ``\\r\\n``, ``\\r`` or
``\\n`` like the loader's).  Overlapping edits are resolved first come,
first served in position order; the rest wait for the next round (the caller
re-checks and applies again).
"""

from __future__ import annotations

import re
from typing import Sequence

from loopc.diagnostics import Diagnostic

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def is_safe(d: Diagnostic) -> bool:
    """Whether ``d`` carries a fix marked safe to apply unattended."""
    fix = d.fix
    return fix is not None and bool(getattr(fix, "is_safe", False)) and bool(fix.edits)


def _offsets(text: str) -> list[int]:
    starts = [0]
    starts.extend(m.end() for m in _LINE_BREAK.finditer(text))
    return starts


def apply_fixes(text: str, diagnostics: Sequence[Diagnostic], *, unsafe: bool = False) -> tuple[str, int]:
    """``(new_text, fixes_applied)`` after applying the (safe, unless
    ``unsafe``) fixes of ``diagnostics`` to ``text``.  A fix whose edits
    overlap an already chosen edit, or fall outside the text, is skipped."""
    starts = _offsets(text)

    def off(line: int, col: int) -> int | None:
        if not 1 <= line <= len(starts):
            return None
        o = starts[line - 1] + col - 1
        return o if 0 <= o <= len(text) else None

    chosen: list[tuple[int, int, str]] = []
    applied = 0
    for d in sorted(diagnostics, key=Diagnostic.sort_key):
        if d.fix is None or not d.fix.edits or not (unsafe or is_safe(d)):
            continue
        edits: list[tuple[int, int, str]] = []
        for e in d.fix.edits:
            a = off(e.span.line, e.span.column)
            b = off(e.span.end_line, e.span.end_column)
            if a is None or b is None or b < a:
                edits = []
                break
            edits.append((a, b, e.new_text))
        if not edits:
            continue
        if any(a < cb and ca < b or (a == b == ca == cb) for a, b, _ in edits for ca, cb, _ in chosen):
            continue
        chosen.extend(edits)
        applied += 1
    if not chosen:
        return text, 0
    out = text
    for a, b, new in sorted(chosen, key=lambda t: (t[0], t[1]), reverse=True):
        out = out[:a] + new + out[b:]
    return out, applied
