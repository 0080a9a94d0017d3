"""Where the cursor is in a plan's YAML, from the text alone
(docs/editors.md#features).

Completion runs while the user types, when the text usually does not parse
(``    ty`` has no colon yet, a flow mapping is not closed).  This module reads
the structure from indentation and the current line instead, as an editor
would: the chain of parent keys (``-`` for a sequence item), whether the
cursor is on a key or on the value of ``key``, the partial word before the
cursor, and the scalar values of the sibling keys of the same mapping
(``type`` of the node being edited, ``node`` of an edge endpoint).  Block
and single-line flow mappings are understood; anything else gives a shallow
but never wrong answer.  Linear in the lines above the cursor, bounded by
:data:`MAX_LINES_UP`.
"""

from __future__ import annotations

import re

import attrs

MAX_LINES_UP = 5000

_KEY_LINE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<dashes>(?:-[ \t]+)*)(?P<key>[^\s:#{}\[\],'\"][^:#{}\[\],]*?|\"[^\"]*\"|'[^']*')[ \t]*:(?:[ \t]+(?P<value>.*))?$"
)
_DASH_ONLY = re.compile(r"^(?P<indent>[ \t]*)(?P<dashes>(?:-[ \t]*)+)$")
_WORD_TAIL = re.compile(r"[A-Za-z0-9_.#\-]*$")


@attrs.frozen
class Cursor:
    """``path`` — parent keys from the root (``-`` = a sequence item);
    ``key`` — the key whose value the cursor is on (``None`` on a key);
    ``prefix`` — the partial word before the cursor (``prefix_len`` code
    points long); ``siblings`` — scalar values of the other keys of the
    mapping the cursor is in; ``value_text`` — the text of the value before
    the cursor (for references inside templates and expressions);
    ``after_colon`` — the cursor directly follows ``key:`` with no space;
    ``item_siblings`` — scalar values of the enclosing sequence item's keys
    (the node or edge being edited) when the cursor is deeper inside it."""

    path: tuple[str, ...]
    key: str | None
    prefix: str
    siblings: dict[str, str]
    value_text: str = ""
    after_colon: bool = False
    item_siblings: tuple[dict[str, str], ...] = ()

    @property
    def in_key(self) -> bool:
        return self.key is None


def _strip_comment(s: str) -> str:
    out = []
    q = ""
    for i, ch in enumerate(s):
        if q:
            if ch == q:
                q = ""
        elif ch in "'\"":
            q = ch
        elif ch == "#" and (i == 0 or s[i - 1] in " \t"):
            break
        out.append(ch)
    return "".join(out).rstrip()


def _unquote(s: str) -> str:
    s = s.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        return s[1:-1]
    return s


def _flow_scan(s: str) -> tuple[list[tuple[int, str]], int]:
    """Unclosed ``{``/``[`` openers of ``s`` (position, char) and whether the
    end is inside a quoted string (1) or not (0)."""
    stack: list[tuple[int, str]] = []
    q = ""
    for i, ch in enumerate(s):
        if q:
            if ch == q:
                q = ""
            continue
        if ch in "'\"" and (i == 0 or s[i - 1] in " \t:,[{"):
            q = ch
        elif ch in "{[":
            stack.append((i, ch))
        elif ch in "}]" and stack:
            stack.pop()
    return stack, 1 if q else 0


def _flow_pairs(body: str) -> dict[str, str]:
    out: dict[str, str] = {}
    depth = 0
    cur = ""
    parts = []
    for ch in body:
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    for p in parts:
        if ":" in p:
            k, _, v = p.partition(":")
            out[_unquote(k)] = _unquote(v)
    return out


def _content_col(indent: str, dashes: str) -> int:
    return len(indent.expandtabs(1)) + len(dashes)


def cursor_at(text: str, line0: int, col0: int) -> Cursor:
    """The :class:`Cursor` at 0-based ``line0`` / code-point ``col0``."""
    lines = text.split("\n")
    if line0 >= len(lines):
        line0 = len(lines) - 1
    cur_full = lines[line0].rstrip("\r")
    before = cur_full[:col0]
    m_prefix = _WORD_TAIL.search(before)
    prefix = m_prefix.group(0) if m_prefix else ""

    # ---- the current line --------------------------------------------------
    indent = re.match(r"[ \t]*", before).group(0)  # type: ignore[union-attr]
    rest = before[len(indent) :]
    dm = re.match(r"(?:-[ \t]+|-$)*", rest)
    dashes = dm.group(0) if dm else ""
    rest = rest[len(dashes) :]
    col = _content_col(indent, dashes)
    path_tail: list[str] = ["-"] * dashes.count("-")
    key: str | None = None
    value_text = ""
    after_colon = False
    flow_path: list[str] = []
    flow_sibs: dict[str, str] | None = None

    stack, _ = _flow_scan(rest)
    if stack:
        # inside a flow collection on this line: `from: {node: a, port: |`
        head = rest[: stack[0][0]]
        hk = head.rstrip()
        if hk.endswith(":"):
            head_key = _unquote(hk[:-1].strip())
            if head_key:
                flow_path.append(head_key)
        for j, (p, ch) in enumerate(stack):
            seg_end = stack[j + 1][0] if j + 1 < len(stack) else len(rest)
            seg = rest[p + 1 : seg_end]
            if ch == "[":
                flow_path.append("-")
                continue
            if j + 1 < len(stack):
                inner = seg.rsplit(",", 1)[-1]
                k = inner.split(":", 1)[0].strip() if ":" in inner else ""
                if k:
                    flow_path.append(_unquote(k))
        last_open, last_ch = stack[-1]
        seg = rest[last_open + 1 :]
        tail = seg.rsplit(",", 1)[-1]
        after_full = cur_full[len(indent) + len(dashes) + last_open + 1 :]
        flow_sibs = _flow_pairs(after_full.split("}", 1)[0])
        if last_ch == "{" and ":" in tail:
            k, _, v = tail.partition(":")
            key = _unquote(k.strip())
            value_text = v.lstrip()
            after_colon = v == ""
            flow_sibs.pop(key, None)
        elif last_ch == "{":
            key = None
            flow_sibs.pop(tail.strip(), None)
        else:
            key = "-"
            value_text = tail.lstrip()
    else:
        km = re.match(r"(?P<key>[^\s:#{}\[\],'\"][^:#{}\[\],]*?|\"[^\"]*\"|'[^']*')[ \t]*:(?P<v>.*)$", rest)
        if km and not (km.group("v") and km.group("v")[0] not in " \t"):
            key = _unquote(km.group("key"))
            value_text = km.group("v").lstrip()
            after_colon = km.group("v") == ""
            st, _ = _flow_scan(value_text)
            if st:  # pragma: no cover - handled above
                pass
        elif km and km.group("v") and km.group("v")[0] not in " \t":
            # `key:value` without a space is a plain scalar in YAML; treat as value
            key = _unquote(km.group("key"))
            value_text = km.group("v")
            after_colon = False

    # ---- parents from indentation -------------------------------------------
    parents: list[str] = []
    sibling_levels: list[dict[str, str]] = []
    own_col = col
    lo = max(0, line0 - MAX_LINES_UP)
    cur_level: dict[str, str] = {}
    level_col = own_col
    sealed = False  # the mapping the cursor is in starts on the cursor's line
    if dashes:
        level_col = len(indent.expandtabs(1))
        sealed = True
    for i in range(line0 - 1, lo - 1, -1):
        raw = _strip_comment(lines[i].rstrip("\r"))
        if not raw.strip():
            continue
        im = re.match(r"[ \t]*", raw).group(0)  # type: ignore[union-attr]
        body = raw[len(im) :]
        dm2 = re.match(r"(?:-[ \t]+|-$)*", body)
        ds = dm2.group(0) if dm2 else ""
        c = _content_col(im, ds)
        ic = len(im.expandtabs(1))
        km = _KEY_LINE.match(raw)
        if sealed:
            if ic >= level_col:
                continue
        elif c > level_col:
            continue
        elif c == level_col:
            if km:
                cur_level.setdefault(_unquote(km.group("key")), _unquote(km.group("value") or ""))
            if ds:
                # the first line of the sequence item the cursor's mapping is
                sibling_levels.append(cur_level)
                parents.extend(["-"] * ds.count("-"))
                cur_level = {}
                level_col = ic
                sealed = True
            continue
        # a parent line
        sibling_levels.append(cur_level)
        cur_level = {}
        sealed = False
        if km:
            parents.append(_unquote(km.group("key")))
            level_col = c
            if ds:
                parents.extend(["-"] * ds.count("-"))
                level_col = ic
                sealed = True
        elif ds:
            parents.extend(["-"] * ds.count("-"))
            level_col = ic
            sealed = True
        else:
            level_col = c
        if level_col == 0 and not sealed:
            # keys at column 0 are root keys: keep collecting them as siblings
            pass
    sibling_levels.append(cur_level)
    # keys below the cursor at the same level are siblings too
    for i in range(line0 + 1, min(len(lines), line0 + 2000)):
        raw = _strip_comment(lines[i].rstrip("\r"))
        if not raw.strip():
            continue
        im = re.match(r"[ \t]*", raw).group(0)  # type: ignore[union-attr]
        ind = len(im.expandtabs(1))
        if ind > own_col:
            continue
        km = _KEY_LINE.match(raw)
        if ind == own_col and km and not raw[len(im) :].startswith("-"):
            sibling_levels[0].setdefault(_unquote(km.group("key")), _unquote(km.group("value") or ""))
            continue
        break
    siblings = sibling_levels[0] if sibling_levels else {}
    # same-line keys before the cursor (`- id: a` then cursor on next key) are handled above
    path = tuple(reversed(parents)) + tuple(path_tail) + tuple(flow_path)
    if flow_sibs is not None:
        # one level per flow collection between the cursor and the block mapping
        filler: tuple[dict[str, str], ...] = tuple({} for _ in range(max(0, len(flow_path) - 1)))
        item_sibs = filler + tuple(sibling_levels)
        siblings = flow_sibs
    else:
        item_sibs = tuple(sibling_levels[1:])
        siblings = dict(siblings)
        if key is not None:
            siblings.pop(key, None)
    if not stack and key is None and dashes:
        pass
    return Cursor(path, key, prefix, siblings, value_text, after_colon, item_sibs)
