"""Inline suppression comments (docs/ci.md#suppressing-a-warning).

A comment line ``# loopc: disable=CODE[,CODE] -- reason`` directly before a
node's ``- id:`` line covers that node (the whole sequence item); directly
before a ``key:`` line it covers that key and its value's subtree.  Several
suppression comments may be stacked on consecutive lines before the same
target.  Codes are ``LPxxxx`` or their slugs.  Only warnings (and infos) can
be suppressed.

The suppressions themselves are checked and reported as warnings:

* LP1901 ``suppression.unused`` — a listed code matched no diagnostic in
  what the comment covers (or the comment is not directly before a node or
  key, so it covers nothing);
* LP1902 ``suppression.no_reason`` — no ``-- reason`` (the suppression still
  applies);
* LP1903 ``suppression.error_code`` — the code is an error, which cannot be
  suppressed (the error is still reported);
* LP1904 ``suppression.malformed`` — the comment does not parse, or names an
  unknown code.

Pure functions over the decoded text, the positioned YAML tree and the
diagnostics of one check: no I/O.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Sequence

from loopc.diagnostics import Diagnostic, Severity, Span
from loopc.value import Value

#: a whole-line comment starting with ``loopc:``
_COMMENT = re.compile(r"^(?P<indent>[ \t]*)#[ \t]*loopc:(?P<body>.*)$")
_DIRECTIVE = re.compile(
    r"^[ \t]*disable[ \t]*=[ \t]*(?P<codes>[^\s,]+(?:[ \t]*,[ \t]*[^\s,]+)*)"
    r"(?:[ \t]+--(?P<reason>.*))?[ \t]*$"
)
_CODE_TOKEN = re.compile(r"[^\s,]+")


class Suppression(Value):
    """One parsed comment: 0-based ``line``; ``codes`` as (as-written,
    normalised code or ``None`` when unknown, 0-based column);
    ``reason`` (stripped, ``None`` when absent); ``error`` the parse
    problem (``None`` when well-formed)."""

    line: int
    column: int
    end_column: int
    codes: tuple[tuple[str, str | None, int], ...] = ()
    reason: str | None = None
    error: str | None = None


class Target(Value):
    """What a suppression covers: 0-based (line, col) start and end of the
    covered text, the covered RFC 6901 pointer, and a description."""

    start: tuple[int, int]
    end: tuple[int, int]
    pointer: str
    what: str

    def covers(self, d: Diagnostic) -> bool:
        if d.pointer and self.pointer and (d.pointer == self.pointer or d.pointer.startswith(self.pointer + "/")):
            return True
        span = d.span
        if span is None:
            return False
        pos = (span.line - 1, span.column - 1)
        return self.start <= pos < self.end


def _resolve(token: str, index: dict[str, Any]) -> str | None:
    entry = index.get(token.upper()) or index.get(token)
    return None if entry is None else entry.code


def parse(text: str, skip_lines: Iterable[int] = ()) -> list[Suppression]:
    """Every ``# loopc:`` comment line of ``text`` (0-based lines in
    ``skip_lines`` — the inside of multi-line scalars — are not comments)."""
    if "loopc:" not in text:
        return []
    from loopc.lint.config import _code_index

    skip = set(skip_lines)
    index = _code_index()
    out: list[Suppression] = []
    for n, line in enumerate(text.splitlines()):
        if "loopc:" not in line or n in skip:
            continue
        m = _COMMENT.match(line)
        if m is None:
            continue
        col = len(m.group("indent"))
        body = m.group("body")
        body_col = m.start("body")
        d = _DIRECTIVE.match(body)
        if d is None:
            out.append(
                Suppression(
                    n,
                    col,
                    len(line),
                    error=("cannot parse this loopc comment: write `# loopc: disable=CODE[,CODE] -- reason`"),
                )
            )
            continue
        codes = []
        for t in _CODE_TOKEN.finditer(d.group("codes")):
            codes.append((t.group(), _resolve(t.group(), index), body_col + d.start("codes") + t.start()))
        reason = d.group("reason")
        reason = reason.strip() if reason is not None else None
        out.append(Suppression(n, col, len(line), tuple(codes), reason or None))
    return out


# The YAML tree (loopc.compiler.yamlnodes) is read by shape, not imported:
# this layer sits below the compiler.  A mapping has ``index``; a sequence
# has ``items`` and no ``index``; anything else is a scalar.


def _is_map(node: Any) -> bool:
    return hasattr(node, "index")


def _is_seq(node: Any) -> bool:
    return hasattr(node, "items") and not hasattr(node, "index")


def _multiline_scalar_lines(root: Any) -> set[int]:
    """0-based lines strictly inside multi-line scalars (block or quoted)."""
    lines: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if _is_map(node):
            stack.extend(node.kv[1::2])
        elif _is_seq(node):
            stack.extend(node.items)
        elif node.end_line > node.line:
            lines.update(range(node.line + 1, node.end_line + 1))
    return lines


def _keys_by_line(root: Any) -> dict[int, list[tuple[Any, Any, Any]]]:
    """0-based line → [(key scalar, value, owning map)] for block mappings."""
    out: dict[int, list[tuple[Any, Any, Any]]] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if _is_map(node):
            for k, v in node.items:
                out.setdefault(k.line, []).append((k, v, node))
                stack.append(v)
        elif _is_seq(node):
            stack.extend(node.items)
    for v in out.values():
        v.sort(key=lambda t: t[0].col)
    return out


def _target_at(line: int, doc: Any, keys: dict[int, list[tuple[Any, Any, Any]]]) -> Target | None:
    entries = keys.get(line)
    if not entries:
        return None
    key, value, owner = entries[0]
    text = doc.line_text(line)
    parent = owner.parent
    first_key = owner.first_key() is key
    if (
        parent is not None
        and _is_seq(parent)
        and first_key
        and owner.line == line
        and text[: key.col].rstrip().endswith("-")
    ):
        item_id = owner.get("id")
        ident = item_id.value if item_id is not None and isinstance(getattr(item_id, "value", None), str) else None
        container = parent.key if parent.parent is not None else None
        kind = {"nodes": "node", "edges": "edge"}.get(str(container), "item")
        what = f"{kind} '{ident}'" if ident else f"this {kind}"
        return Target((owner.line, owner.col), _end(owner), owner.pointer, what)
    end = _end(value) if _end(value) > (key.end_line, key.end_col) else (key.end_line, key.end_col)
    return Target((key.line, key.col), end, value.pointer, f"key '{key.value}'")


def _end(node: Any) -> tuple[int, int]:
    return (
        (node.end_line, node.end_col)
        if (node.end_line, node.end_col) > (node.line, node.col)
        else (node.line, node.col + 1)
    )


def _diag(code: str, message: str, line: int, col: int, end_col: int) -> Diagnostic:
    from loopc import codes

    entry = codes.get(code)
    return Diagnostic(
        code=code,
        name=entry.name,
        severity=entry.severity,
        message=message,
        span=Span(line + 1, col + 1, line + 1, end_col + 1),
    )


def apply(diagnostics: Sequence[Diagnostic], doc: Any) -> list[Diagnostic]:
    """Apply the suppression comments of ``doc`` (a
    :class:`~loopc.compiler.yamlnodes.YDocument`) to ``diagnostics``.

    Returns the diagnostics that remain plus the LP1901–LP1904 findings
    about the comments themselves, unsorted.  Without a document (the YAML
    did not load) the diagnostics are returned unchanged.
    """
    if doc is None or doc.root is None or "loopc:" not in doc.text:
        return list(diagnostics)
    sups = parse(doc.text, _multiline_scalar_lines(doc.root))
    if not sups:
        return list(diagnostics)
    keys = _keys_by_line(doc.root)
    by_line = {s.line: s for s in sups}
    out: list[Diagnostic] = []
    meta: list[Diagnostic] = []
    suppressed_ids: set[int] = set()
    for s in sups:
        if s.error is not None:
            meta.append(_diag("LP1904", s.error, s.line, s.column, s.end_column))
            continue
        target_line = s.line + 1
        while target_line in by_line:
            target_line += 1
        target = _target_at(target_line, doc, keys)
        if s.reason is None:
            meta.append(
                _diag(
                    "LP1902",
                    "this suppression gives no reason: add ` -- why the warning does not apply here`",
                    s.line,
                    s.column,
                    s.end_column,
                )
            )
        for written, code, col in s.codes:
            end_col = col + len(written)
            if code is None:
                meta.append(
                    _diag(
                        "LP1904",
                        f"unknown diagnostic code '{written}' (see `loopc explain --list`)",
                        s.line,
                        col,
                        end_col,
                    )
                )
                continue
            from loopc import codes as registry

            if registry.get(code).severity is Severity.ERROR:
                meta.append(
                    _diag(
                        "LP1903",
                        f"{code} is an error and cannot be suppressed: an error means the plan "
                        "cannot compile; fix it instead",
                        s.line,
                        col,
                        end_col,
                    )
                )
                continue
            if target is None:
                meta.append(
                    _diag(
                        "LP1901",
                        f"this suppression of {code} covers nothing: put it on the line directly "
                        "before a node's `- id:` line or before a key",
                        s.line,
                        col,
                        end_col,
                    )
                )
                continue
            hit = False
            for d in diagnostics:
                if d.code == code and d.severity is not Severity.ERROR and target.covers(d):
                    suppressed_ids.add(id(d))
                    hit = True
            if not hit:
                meta.append(
                    _diag(
                        "LP1901",
                        f"unused suppression: no {code} is reported in {target.what}; remove it",
                        s.line,
                        col,
                        end_col,
                    )
                )
    out = [d for d in diagnostics if id(d) not in suppressed_ids]
    return out + meta
