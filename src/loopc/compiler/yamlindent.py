"""The cause of a YAML indentation error, told by re-parsing: the error path
of :mod:`loopc.compiler.yamlload` (pass 1, docs/reference.md#source-file).

libyaml gives up where the indentation stops making sense, which is often a
line *after* the one that is mis-indented: ``mode:`` indented one column too
deep under ``switch:`` makes the following ``cases:`` line the error.  When
the parse fails with an indentation-type error, :func:`find_cause` takes the
lines that could be the mis-indented one — the line where the parser stopped,
the content line before it, and the last key of the innermost open block
mapping before that — and the columns the enclosing structure makes
plausible for each (the columns of the open blocks' entries, the columns of
its neighbours, a continuation column), and re-parses the text with each
re-indentation (at most :data:`MAX_INDENT_REPARSES`).  The cause is the line
whose re-indentation gets the parser furthest (past the end of the block
around the error, or at least further than it got); only the columns that
do so are named.

Cost: each re-parse reads a *window*, not the whole text — the lines from
the innermost open block entry that starts before the candidates to the end
of that entry, preceded by the entry line of every enclosing open block (a
skeleton that gives the parser the same open blocks at the window's first
line) — so an error in a large file costs a few short parses.  The window
is checked once (unmodified, it must stop where the whole text stopped);
the last key line is only tried when a short window holds it.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from typing import Any, Callable, NamedTuple

from loopc.compiler.yamlnodes import YMap, YNode, YSeq
from loopc.lineindex import LineIndex

MAX_INDENT_REPARSES = 8
"""Re-indentations re-parsed at most per error (the window check and the
whole-text check of the offered fix come on top)."""

# the key line's window (which starts before it) is re-parsed when it is at
# most this many lines, or twice the stop line's window
_KEY_WINDOW = 400
_SIBLING_SCAN = 80  # content lines looked at each way for a line to name
_TOKEN = re.compile(r"[^\s:,\[\]{}#]{1,40}")


class Choice(NamedTuple):
    """A column the cause line can be indented to (0-based ``col``), with
    the line it then lines up with (``like``: label, 0-based line and column,
    width) or the key whose value it then continues (``continues``: key,
    0-based line)."""

    col: int
    like: tuple[str, int, int, int] | None
    continues: tuple[str, int] | None


class Cause(NamedTuple):
    """The mis-indented line: 0-based ``line`` and current ``col`` of its
    first character, its ``token`` (``-`` for a list item), whether it is a
    ``- `` ``item``, the ``choices`` that parse (best first), the ``edits``
    of the first choice (0-based line, spaces to replace, new spaces; empty
    when no fix is offered), whether it ``parses`` (the parser then gets
    through the block around the error: to its end, or the text's end) and
    whether the fix is ``safe``: the one re-indentation tried that parses
    (no other column, no other line) — with a judge, the one that parses and
    that the judge accepts."""

    line: int
    col: int
    token: str
    item: bool
    choices: tuple[Choice, ...]
    edits: tuple[tuple[int, int, int], ...]
    parses: bool
    safe: bool = False


def reparse_stop(text: str) -> tuple[int, int] | None:
    """Where libyaml gives up on ``text``: ``(line, index)`` (0-based line,
    code-point index), ``(0, 0)`` when it gives no mark, ``None`` when the
    whole stream parses.  A candidate repair is tested with it (here and in
    :mod:`loopc.compiler.yamlload`)."""
    from ruamel.yaml.cyaml import CParser
    from ruamel.yaml.error import YAMLError

    parser = CParser(text)
    try:
        while parser.get_event() is not None:
            pass
    except YAMLError as exc:
        pm = getattr(exc, "problem_mark", None)
        return (pm.line, pm.index) if pm is not None else (0, 0)
    return None


def _reparse_stop_line(text: str) -> int | None:
    """0-based line where libyaml gives up on ``text``, or ``None`` when it
    all parses."""
    stop = reparse_stop(text)
    return None if stop is None else stop[0]


def _lead(s: str) -> int:
    """Leading spaces of a line."""
    return len(s) - len(s.lstrip(" "))


def _is_item(s: str) -> bool:
    t = s.lstrip(" ")
    return t == "-" or t.startswith("- ")


def _key_col(s: str) -> int:
    """Column of the line's first key: after the ``- `` of a list item."""
    i = _lead(s)
    if _is_item(s):
        i += 1
        while i < len(s) and s[i] == " ":
            i += 1
    return i


def _code(s: str) -> str:
    """The line without a trailing comment (approximate: outside quotes
    only when no quote precedes the ``#``)."""
    m = re.search(r"(^|\s)#", s)
    if m and not any(q in s[: m.start()] for q in "'\""):
        s = s[: m.start()]
    return s.rstrip()


def _opens_block(s: str) -> bool:
    """Whether the line ends in a key whose value is on the following lines."""
    c = _code(s)
    return c.endswith(":") or c.lstrip(" ") == "-"


def _inline_key(s: str) -> str | None:
    """The key of a ``key: value`` line with a scalar value on it, or ``None``."""
    c = _code(s)[_key_col(s) :]
    m = re.match(r"([^\s:#'\"{}\[\],][^:#]*?):\s+(\S)", c)
    if m is None or m.group(2) in "{[|>&*!":
        return None
    return m.group(1)


class _Text:
    """Lines of the source with the facts the search needs."""

    def __init__(self, text: str, verbatim: list[tuple[int, int]]) -> None:
        self.index = LineIndex(text)
        self.n = self.index.line_count
        self._lines: dict[int, str] = {}
        self._verbatim = sorted(verbatim)
        self._vstarts = [a for a, _b in self._verbatim]

    def line(self, i: int) -> str:
        s = self._lines.get(i)
        if s is None:
            s = self._lines[i] = self.index.line_text(i)
        return s

    def content(self, i: int) -> bool:
        """A line that holds YAML structure (not blank, not a comment, not
        a line inside a quoted or block scalar)."""
        if not 0 <= i < self.n:
            return False
        t = self.line(i).strip(" ")
        if not t or t.startswith("#"):
            return False
        start = self.index.line_start(i)
        k = bisect.bisect_left(self._vstarts, start) - 1
        return not (k >= 0 and self._verbatim[k][0] < start < self._verbatim[k][1])

    def prev_content(self, i: int, limit: int = 400) -> int | None:
        j = i - 1
        while j >= 0 and i - j <= limit:
            if self.content(j):
                return j
            j -= 1
        return None


def _unit(t: _Text, around: int) -> int:
    """The text's indentation step: the most common distance from a key
    that opens a block to the block's first line, on the lines around
    ``around`` (2 when there is none)."""
    steps: Counter[int] = Counter()
    prev: str | None = None
    for i in range(max(0, around - 400), min(t.n, around + 400)):
        if not t.content(i):
            continue
        s = t.line(i)
        if prev is not None and _opens_block(prev) and not _is_item(prev) and _lead(s) > _key_col(prev):
            steps[_lead(s) - _key_col(prev)] += 1
        prev = s
    return steps.most_common(1)[0][0] if steps else 2


def _entry_line(node: YNode, t: _Text, before: int | None = None) -> int | None:
    """0-based line of a block collection's last entry (its last key; the
    ``-`` of its last item) that starts on a line before ``before`` (any
    line when ``None``), or ``None`` when there is none or it cannot be told."""
    if isinstance(node, YMap):
        for key, _value in reversed(node.items):
            if before is None or key.line < before:
                return key.line
        return None
    if isinstance(node, YSeq):
        for item in reversed(node.items):
            ln = item.line
            if before is None or ln < before:
                s = t.line(ln)
                return ln if len(s) > node.col and s[node.col] == "-" else None
    return None


class _Window:
    """The lines re-parsed for a candidate: ``head`` (entry lines of the
    enclosing open blocks) then ``first .. end`` contiguous."""

    def __init__(self, t: _Text, head: list[int], first: int, end: int) -> None:
        self.t, self.head, self.first, self.end = t, head, first, end
        self.orig = head + list(range(first, end))

    def text(self, changes: dict[int, str]) -> str:
        t = self.t
        return "\n".join(changes.get(i, t.line(i)) for i in self.orig) + "\n"

    def stop(self, changes: dict[int, str]) -> float:
        """Original line where the window with ``changes`` stops parsing;
        ``inf`` when it all parses."""
        got = _reparse_stop_line(self.text(changes))
        if got is None:
            return float("inf")
        return float(self.orig[min(got, len(self.orig) - 1)])


def _window(t: _Text, open_nodes: list[YNode], first: int, last: int, limit: int | None = None) -> _Window | None:
    """The window for candidates on lines ``first..last`` (see the module
    docstring); ``None`` when the whole text must be re-parsed, or when the
    window would end after line ``limit``."""
    chain: list[tuple[int, YNode]] = []
    for node in open_nodes:
        if getattr(node, "flow", False):
            return None
        ln = _entry_line(node, t)
        if ln is None:
            return None
        chain.append((ln, node))
    for depth in range(len(chain) - 1, -1, -1):
        znode = chain[depth][1]
        got = _entry_line(znode, t, first)
        if got is not None:
            zline = got
            break
    else:
        return None
    head = sorted({ln for ln, _node in chain[:depth] if ln < zline})
    zcol = znode.col
    end = last + 1
    while end < t.n:
        if limit is not None and end > limit:
            return None
        if t.content(end):
            s = t.line(end)
            lead = _lead(s)
            if lead < zcol or (lead == zcol and (isinstance(znode, YSeq) or not _is_item(s))):
                break
        end += 1
    return _Window(t, head, zline, end)


def _reindent(t: _Text, line: int, new: int, block: bool) -> dict[int, str] | None:
    """The changed lines when ``line`` is indented to ``new`` spaces (with
    the lines of its block, those after it indented deeper than it, when
    ``block``)."""
    s = t.line(line)
    old = _lead(s)
    out = {line: " " * new + s[old:]}
    if block:
        delta = new - old
        j = line + 1
        moved = False
        while j < t.n:
            sj = t.line(j)
            if sj.strip(" ") == "":
                j += 1
                continue
            lj = _lead(sj)
            if t.content(j) and lj <= old:
                break
            if lj + delta < 0 or (delta < 0 and lj < -delta):
                return None
            out[j] = " " * (lj + delta) + sj[lj:]
            moved = True
            j += 1
        if not moved:
            return None
    return out


def _expected(t: _Text, line: int, col: int, unit: int) -> bool:
    """Whether ``col`` is where the structure above ``line`` puts its
    entries: ``unit`` deeper than the key that opens the block, or the
    column of the list item's first key."""
    j = t.prev_content(line)
    while j is not None:
        s = t.line(j)
        if _lead(s) < col:
            if _opens_block(s):
                return col in (_key_col(s) + unit, _key_col(s) if _is_item(t.line(line)) else -1)
            return _is_item(s) and _key_col(s) == col
        j = t.prev_content(j)
    return col == 0


def _irregular(t: _Text, changes: dict[int, str], lo: int, hi: int, unit: int) -> int:
    """How many blocks on lines ``lo..hi`` (with ``changes``) do not start
    one indentation ``unit`` deeper than the key that opens them: of two
    re-indentations that both parse, the one that leaves the text regular
    is what the author meant (a key moved away from its block leaves its
    children a step too far from it)."""
    bad = 0
    prev: str | None = None
    for i in range(lo, hi):
        if not t.content(i):
            continue
        s = changes.get(i, t.line(i))
        if prev is not None and _opens_block(prev) and not _is_item(prev):
            step = _lead(s) - _key_col(prev)
            if step != unit:
                bad += 1  # a step off the unit, a key left without its block
        prev = s
    return bad


def _run(t: _Text, changes: dict[int, str], line: int, col: int) -> int:
    """Content lines right above ``line`` (with ``changes``) that start at
    ``col`` too, up to the first that does not (or the list item line that
    starts the mapping): a mis-indented line breaks off a run of siblings,
    its fix rejoins it."""
    total, j = 0, line - 1
    item = _is_item(changes.get(line, t.line(line)))
    while j >= 0 and total < 20:
        if t.content(j):
            s = changes.get(j, t.line(j))
            if _lead(s) == col and _is_item(s) == item:
                total += 1
            elif not item and _is_item(s) and _key_col(s) == col:
                return total + 1
            else:
                break
        j -= 1
    return total


def _like(t: _Text, line: int, col: int, item: bool) -> tuple[str, int, int, int] | None:
    """The nearest line in the same block as ``line`` (once it is at
    ``col``) whose entry starts at ``col``: its label, line, column, width."""
    for step in (-1, 1):
        j, seen = line + step, 0
        while 0 <= j < t.n and seen < _SIBLING_SCAN:
            if not t.content(j):
                j += step
                continue
            seen += 1
            s = t.line(j)
            lead = _lead(s)
            if item:
                if lead == col and _is_item(s):
                    return ("the `-` items", j, col, 1)
                if lead < col:
                    break
            else:
                kc = _key_col(s)
                if kc == col and not (lead == col and _is_item(s)):
                    m = _TOKEN.match(s, kc)
                    tok = m.group() if m else s[kc : kc + 1]
                    return (f"`{tok}`", j, col, len(tok))
                if kc < col:
                    break
            j += step
    return None


def _enclosing_cols(t: _Text, line: int, item: bool, depth: int = 4) -> set[int]:
    """The entry columns of the blocks enclosing ``line`` by indentation
    (each content line above with less lead than every line between): their
    keys' columns, or for a ``- `` item their ``-`` columns — where a line
    dedented out of them may belong (the parser has closed those blocks, so
    they are not among the open ones)."""
    out: set[int] = set()
    lead = _lead(t.line(line))
    j = t.prev_content(line)
    while j is not None and lead > 0 and len(out) < depth:
        s = t.line(j)
        if _lead(s) < lead:
            lead = _lead(s)
            if not item:
                out.add(_key_col(s))
            elif _is_item(s):
                out.add(lead)
        j = t.prev_content(j)
    return out


def find_cause(
    text: str,
    stop_line: int,
    open_nodes: list[YNode],
    closed: YNode | None,
    verbatim: list[tuple[int, int]],
    judge: Callable[[str], bool] | None = None,
) -> Cause | None:
    """The mis-indented line behind a parse error that stopped on 0-based
    ``stop_line`` (see the module docstring), or ``None`` when no
    re-indentation tried gets the parser further.

    ``open_nodes`` are the block collections open at the stop (outermost
    first), ``closed`` the one closed last, ``verbatim`` the (start, end)
    indices of the multi-line scalars read before the stop.  ``judge``
    (whole repaired text → is it a plan without errors?), when given, is
    asked of every re-indentation that parses: when it accepts some, only
    those are named and the fix is safe when it accepts exactly one; when it
    accepts none, no fix is safe (parsing is not enough: ``switch:`` moved
    into a node's ``input`` parses, as six errors).
    """
    if any(b in text for b in ("\x85", "\u2028", "\u2029")) or text.startswith("\ufeff"):
        return None  # libyaml's lines are not the editor's: nothing re-indented
    t = _Text(text, verbatim)
    if not t.content(stop_line):
        return None
    unit = _unit(t, stop_line)
    s_text = t.line(stop_line)
    s_col = _lead(s_text)
    s_item = _is_item(s_text)
    p = t.prev_content(stop_line)

    # the columns of the open blocks' entries (a mapping's keys, a list's `-`)
    blocks: list[tuple[int, bool]] = []
    for node in open_nodes + ([closed] if closed is not None else []):
        if isinstance(node, YMap) and not node.flow and node.items:
            blocks.append((node.items[-1][0].col, False))
        elif isinstance(node, YSeq) and not node.flow:
            blocks.append((node.col, True))

    # candidate lines, each with its columns (0-based, nearest first)
    cands: list[tuple[int, list[int]]] = []
    cols = {c for c, seq in blocks if seq == s_item or (s_item and not seq)}
    if not s_item and p is not None and _inline_key(t.line(p)) is not None:
        cols.add(_key_col(t.line(p)) + unit)  # a dedented continuation of p's value
    if p is not None:
        ps = t.line(p)
        cols.add(_lead(ps) if s_item == _is_item(ps) else _key_col(ps))
        if s_col < _lead(ps):
            cols |= _enclosing_cols(t, p, s_item)
    cols.discard(s_col)
    cands.append((stop_line, sorted(cols, key=lambda c: (abs(c - s_col), -c))[:3]))
    if p is not None:
        ps = t.line(p)
        p_item = _is_item(ps)
        pcols = {s_col if p_item == s_item else _key_col(s_text)}
        pp = t.prev_content(p)
        if pp is not None:
            pps = t.line(pp)
            pcols.add(
                _key_col(pps) + unit
                if _opens_block(pps)
                else (_lead(pps) if p_item == _is_item(pps) else _key_col(pps))
            )
        pcols.discard(_lead(ps))
        cands.append((p, sorted(pcols, key=lambda c: (abs(c - _lead(ps)), -c))[:2]))
        keys = [
            n.items[-1][0].line
            for n in open_nodes
            if isinstance(n, YMap) and not n.flow and n.items and n.items[-1][0].line < p
        ]
        if keys:
            k = max(keys)
            ks = t.line(k)
            kcols = {s_col if _is_item(ks) == s_item else _key_col(s_text)}
            kp = t.prev_content(k)
            if kp is not None:
                kps = t.line(kp)
                kcols.add(_key_col(kps) + unit if _opens_block(kps) else _key_col(kps))
            kcols.discard(_lead(ks))
            cands.append((k, sorted(kcols, key=lambda c: (abs(c - _lead(ks)), -c))[:2]))

    # the window of the stop line and the line before it; the key line is
    # tried when that window holds it (a key further up is the entry of an
    # outer block, whose re-parse would take the text to the block's end)
    win = _window(t, open_nodes, min(ln for ln, _c in cands[:2]), stop_line)
    if len(cands) == 3:
        if win is None:
            win = _window(t, open_nodes, cands[2][0], stop_line)
        elif cands[2][0] <= win.first:
            kwin = _window(t, open_nodes, cands[2][0], stop_line, limit=win.end)
            if kwin is not None and len(kwin.orig) <= max(2 * len(win.orig), _KEY_WINDOW):
                win = kwin  # starts earlier, ends where the other does
            else:
                cands = cands[:2]
    if win is not None and win.stop({}) != stop_line:
        win = None
    if win is None:
        win = _Window(t, [], 0, t.n)

    tried = 0
    results: list[tuple[float, int, int, int, dict[int, str]]] = []  # (stop, line, col, order, changes)
    order = 0
    for line, cols_ in cands:
        for col in cols_:
            if tried >= MAX_INDENT_REPARSES:
                break
            changes = _reindent(t, line, col, False)
            assert changes is not None
            tried += 1
            got = win.stop(changes)
            if got != float("inf") and got > stop_line and tried < MAX_INDENT_REPARSES:
                # got further, not through: the lines of its block may have
                # to move with it (a whole list item misaligned)
                block = _reindent(t, line, col, True)
                if block is not None:
                    tried += 1
                    got_b = win.stop(block)
                    if got_b > got:
                        got, changes = got_b, block
            if got > stop_line:
                results.append((got, line, col, order, changes))
            order += 1
    if not results:
        return None
    judged_bad = False
    if judge is not None:
        through = [r for r in results if r[0] == float("inf")]
        accepted = [r for r in through if judge(_apply(text, t, r[4]))]
        if accepted:
            results = accepted
        judged_bad = bool(through) and not accepted
    best = max(r[0] for r in results)
    top = [r for r in results if r[0] == best]

    lo, hi = max(0, min(ln for ln, _c in cands) - 4), min(t.n, stop_line + 12)

    near = {stop_line, p}

    def rank(r: tuple[float, int, int, int, dict[int, str]]) -> tuple[int, ...]:
        # a re-indentation that leaves the text regular, of the stop line or
        # the line before it, that joins the longer run of siblings, at the
        # column the block above expects
        return (
            _irregular(t, r[4], lo, hi, unit),
            0 if r[1] in near else 1,
            -_run(t, r[4], r[1], r[2]),
            0 if _expected(t, r[1], r[2], unit) else 1,
            0 if r[1] == p else 1,
            r[3],
        )

    def closest(r: tuple[float, int, int, int, dict[int, str]]) -> tuple[int, int, int]:
        # of the columns of one line: the regular one, then the nearest (the
        # deeper of two as near: the line stays in the innermost block)
        return (_irregular(t, r[4], lo, hi, unit), abs(r[2] - _lead(t.line(r[1]))), -r[2])

    top.sort(key=rank)
    cause_line = top[0][1]
    mine = sorted((r for r in top if r[1] == cause_line), key=closest)
    c_text = t.line(cause_line)
    item = _is_item(c_text)
    choices = []
    for _got, line, col, _o, _changes in mine:
        like = _like(t, line, col, item)
        cont = None
        if like is None and not item and p is not None and line == stop_line:
            key = _inline_key(t.line(p))
            if key is not None and col > _key_col(t.line(p)):
                cont = (key, p)
        choices.append(Choice(col, like, cont))
    changes = mine[0][4]
    edits: tuple[tuple[int, int, int], ...] = ()
    irregular = _irregular(t, changes, lo, hi, unit)
    rival = cause_line in near and any(
        r[1] != cause_line and r[1] in near and _irregular(t, r[4], lo, hi, unit) == irregular for r in top
    )
    parses = best == float("inf")
    if parses and not rival and (len(mine) == 1 or closest(mine[0])[:2] != closest(mine[1])[:2]):
        # the re-indentation gets the parser through the window, one column
        # is best, and the other of the stop line and the line before it does
        # not parse as regularly re-indented (otherwise a person decides: no fix)
        edits = tuple((ln, _lead(t.line(ln)), _lead(new)) for ln, new in sorted(changes.items()))
    tok_m = _TOKEN.match(c_text, _lead(c_text))
    token = "-" if item else (tok_m.group() if tok_m else c_text.strip()[:1])
    # exactly one possible answer (docs/api.md, Fix.applicability): no other
    # line or column tried gets the parser through the window
    safe = bool(edits) and not judged_bad and sum(1 for r in results if r[0] == float("inf")) == 1
    return Cause(cause_line, _lead(c_text), token, item, tuple(choices), edits, parses, safe)


def _apply(text: str, t: _Text, changes: dict[int, str]) -> str:
    """``text`` with whole lines replaced (line breaks kept)."""
    out = []
    pos = 0
    for ln in sorted(changes):
        a = t.index.line_start(ln)
        b = t.index.line_end(ln)
        out.append(text[pos:a])
        out.append(changes[ln])
        pos = b
    out.append(text[pos:])
    return "".join(out)


def describe(choices: tuple[Choice, ...]) -> str:
    """``column 5 (like `id` on line 7) or column 7 (to continue the value
    of `text` on line 9)`` (1-based)."""
    parts = []
    for ch in choices:
        if ch.like is not None:
            parts.append(f"column {ch.col + 1} (like {ch.like[0]} on line {ch.like[1] + 1})")
        elif ch.continues is not None:
            parts.append(
                f"column {ch.col + 1} (to continue the value of `{ch.continues[0]}` on line {ch.continues[1] + 1})"
            )
        else:
            parts.append(f"column {ch.col + 1}")
    return " or ".join(parts)


def related(choices: tuple[Choice, ...]) -> list[tuple[str, Any]]:
    """One related location per named sibling: ``"`id` is at column 5"``."""
    from loopc.diagnostics import Span

    out = []
    for ch in choices:
        if ch.like is not None:
            label, ln, col, width = ch.like
            verb = "are" if label.startswith("the ") else "is"
            out.append((f"{label} {verb} at column {col + 1}", Span(ln + 1, col + 1, ln + 1, col + 1 + width)))
    return out
