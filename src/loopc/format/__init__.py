"""The canonical, comment-preserving formatter of plan sources: what
``loopc fmt`` writes and the language server's ``textDocument/formatting``
returns (docs/ci.md#formatting).

The source is loaded with ruamel.yaml's round-trip loader and dumped with
loopc's layout: two-space mappings, sequences indented two with the dash at
the parent's indentation plus two (``nodes:\\n  - id: x``), one space after
``:`` and ``,``, no trailing spaces, one final newline, long lines never
wrapped; comments, key order, quoting, flow-or-block style of each
collection and block scalars are kept.  The result is checked before it is
returned (the safety net): it must parse to the same values, types
included, hold the same comments (text and order), and compile to the same
semantic digest (or, for a plan with errors, give the same diagnostic
codes); a source whose YAML does not load, or whose formatting the net
refuses, is left alone with a message.  Formatting is idempotent.

A layer above the pipeline and below the consumers that use it (the
language server, the CLI): no I/O, never raises on bad input except
:class:`FormatError`, which says why the source is left as it is.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import Any


class FormatError(Exception):
    """The source cannot be formatted safely: ``str(exc)`` says why (one
    line), ``reason`` is the short kind a summary counts (:data:`REASONS`)."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


#: the kinds of "could not be formatted", as a summary names them
REASONS = (
    "unreadable",
    "too large",
    "not UTF-8",
    "YAML does not load",
    "refused by the safety net",
    "cannot round-trip",
    "cannot write",
)


class _Null(str):
    """A null as the source spelt it (``null``, ``~``, ``NULL``, ...): ruamel
    loads every null as ``None`` and writes ``None`` as an empty value in a
    block (``workScope:``, which reads as missing), so each explicit null is
    swapped for its spelling before the dump and written back as it was."""


def _represent_null(representer: Any, data: _Null) -> Any:
    return representer.represent_scalar("tag:yaml.org,2002:null", str(data))


def _yaml() -> Any:
    from ruamel.yaml import YAML

    y = YAML(typ="rt")
    y.representer.add_representer(_Null, _represent_null)
    y.indent(mapping=2, sequence=4, offset=2)
    y.width = 4096
    y.preserve_quotes = True
    y.allow_duplicate_keys = False
    return y


def _meaning(res: Any) -> tuple[str, Any]:
    """What formatting must not change, from a compile result: the semantic
    digest when the plan compiles, else the sorted diagnostic codes."""
    if res.ok and res.digest:
        return ("digest", res.digest)
    return ("codes", tuple(sorted(d.code for d in res.diagnostics)))


def _keep_nulls(data: Any, node: Any) -> Any:
    """``data`` (ruamel's round-trip tree) with every explicitly spelt null
    scalar of loopc's tree ``node`` replaced by its spelling (:class:`_Null`),
    walking both trees together; returns the replacement for ``data``
    itself.  Iterative (nesting is bounded, but no recursion is needed)."""
    from loopc.compiler.yamlnodes import YMap, YScalar, YSeq

    def spelt(n: Any) -> Any:
        if isinstance(n, YScalar) and n.value is None and n.style == "" and n.raw:
            return _Null(n.raw)
        return None

    top = spelt(node)
    if top is not None:
        return top
    work = [(data, node)]
    while work:
        d, n = work.pop()
        if isinstance(n, YMap) and isinstance(d, dict):
            for _key, kn, vn in n.pairs():
                k = kn.value
                if isinstance(k, (dict, list)) or k not in d:
                    continue
                rep = spelt(vn)
                if rep is not None and d[k] is None:
                    d[k] = rep
                else:
                    work.append((d[k], vn))
        elif isinstance(n, YSeq) and isinstance(d, list) and len(d) == len(n.items):
            for i, vn in enumerate(n.items):
                rep = spelt(vn)
                if rep is not None and d[i] is None:
                    d[i] = rep
                else:
                    work.append((d[i], vn))
    return data


def _layout(body: str, tree: Any = None, strip: bool = True) -> str:
    """The ruamel round trip with loopc's layout (no checks; may raise);
    ``tree`` is loopc's YAML tree of ``body``, whose explicit nulls are kept
    as spelt.  With ``strip``, trailing spaces and tabs are removed from
    every line (only those: a trailing NBSP or other Unicode space can be
    part of a plain scalar)."""
    y = _yaml()
    data = y.load(body)
    if tree is not None:
        data = _keep_nulls(data, tree)
    buf = io.StringIO()
    y.dump(data, buf)
    lines = buf.getvalue().splitlines()
    out = "\n".join(line.rstrip(" \t") for line in lines) if strip else "\n".join(lines)
    return out.rstrip("\n") + "\n"


#: a block scalar's header indicators (``|``, ``>-``, ``|2+``), before its
#: optional comment
_BLOCK_HEADER = re.compile(r"[|>][0-9+-]*")
_COMMENT = re.compile(r"#[^\r\n]*")


def _walk(root: Any) -> Iterator[Any]:
    """Every node of loopc's YAML tree ``root`` in document order, each
    mapping key (its :class:`YScalar` or key record) before its value;
    iterative (nesting is bounded, but no recursion is needed)."""
    from loopc.compiler.yamlnodes import YMap, YSeq

    work: list[Any] = [root]
    while work:
        n = work.pop()
        yield n
        if isinstance(n, YMap):
            kv = n.kv
            work.extend(reversed(kv))
        elif isinstance(n, YSeq):
            work.extend(reversed(n.items))


def _span(n: Any) -> tuple[int, int]:
    """``(start, end)`` code-point offsets of a node or a key record."""
    if n.__class__ is tuple:  # a KeyRecord (loopc.compiler.yamlnodes)
        return n[5], n[8]
    return n.start, n.end


def comments(text: str, root: Any) -> list[tuple[int, str]]:
    """Every comment of ``text`` as ``(offset, text)`` in order, the text
    from ``#`` to the end of its line without trailing spaces and tabs.

    ``root`` is loopc's YAML tree of ``text`` (loopc.compiler.yamlload):
    outside its scalars (keys included) the source holds only indicators,
    white space and comments, so a ``#`` there starts a comment; a block
    scalar's header line may end in one."""
    from loopc.compiler.yamlnodes import YScalar

    masks: list[tuple[int, int]] = []
    for n in _walk(root):
        if n.__class__ is tuple:
            masks.append(_span(n))
        elif isinstance(n, YScalar):
            start, end = n.start, n.end
            if n.style in ("|", ">"):
                nl = text.find("\n", start, end)
                head = _BLOCK_HEADER.match(text, start)
                if head is not None and nl > 0:
                    masks.append((start, head.end()))
                    start = nl
            masks.append((start, end))
    masks.sort()
    found: list[tuple[int, str]] = []
    at = 0
    for start, end in [*masks, (len(text), len(text))]:
        if start > at:
            for m in _COMMENT.finditer(text, at, start):
                found.append((m.start(), m.group().rstrip(" \t")))
        at = max(at, end)
    return found


def _values(root: Any) -> list[tuple[Any, ...]]:
    """The parsed content of loopc's YAML tree ``root`` as a flat list in
    document order: ``("{", n)`` / ``("[", n)`` opening a mapping or
    sequence of ``n`` entries, and ``(type, repr, node)`` for every scalar
    and key (the type and ``repr`` of its resolved value: ``1``, ``1.0``,
    ``True`` and ``"1"`` differ, and so do ``sent`` and ``sent\u00a0``)."""
    from loopc.compiler.yamlnodes import YMap, YSeq

    out: list[tuple[Any, ...]] = []
    for n in _walk(root):
        if n.__class__ is tuple:
            out.append((type(n[1]).__name__, repr(n[1]), n))
        elif isinstance(n, YMap):
            out.append(("{", len(n.kv) // 2))
        elif isinstance(n, YSeq):
            out.append(("[", len(n.items)))
        else:
            out.append((type(n.value).__name__, repr(n.value), n))
    return out


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _changed_value(body: str, root: Any, out_root: Any) -> str | None:
    """Why the formatted tree ``out_root`` does not hold the values of the
    source tree ``root`` (``None`` when it does)."""
    before, after = _values(root), _values(out_root)
    for a, b in zip(before, after):
        if a[:2] != b[:2]:
            where = f"line {_line(body, _span(a[2])[0])}" if len(a) > 2 else "a collection"
            return f"formatting would change the value at {where} ({a[1]} would read {b[1]})"
    if len(before) != len(after):
        return "formatting would change the document's structure"
    return None


def _lost_comment(body: str, root: Any, out: str, out_root: Any) -> str | None:
    """Why the comments of ``out`` are not those of ``body`` in text and
    order (``None`` when they are)."""
    from loopc.compiler.yamlnodes import YMap, YSeq

    before, after = comments(body, root), comments(out, out_root)
    for i, (offset, c) in enumerate(before):
        if i >= len(after) or after[i][1] != c:
            inflow = any(isinstance(n, (YMap, YSeq)) and n.flow and n.start < offset < n.end for n in _walk(root))
            hint = (" (ruamel.yaml drops a comment inside a flow collection: move it out, or write "
                    "the collection in block style)") if inflow else ""
            return f"formatting would drop or change the comment on line {_line(body, offset)}{hint}"
    if len(after) != len(before):
        return "formatting would add a comment"
    return None


def _problem(body: str, pre: Any, out: str) -> tuple[str | None, Any]:
    """``(why, post)``: why ``out`` is not a safe formatting of ``body``
    (whose compile result is ``pre``; ``None`` when safe) and the compile
    result of ``out``.  It must hold the same values (types included) and
    the same comments in the same order, and compile to the same semantic
    digest (or, with errors, the same diagnostic codes)."""
    from loopc.pipeline import compile_source

    post = compile_source(out)
    out_doc = post.check.document if post.check is not None else None
    if out_doc is None or out_doc.root is None:
        return "the formatted text would not load", post
    root = pre.check.document.root
    why = _changed_value(body, root, out_doc.root) or _lost_comment(body, root, out, out_doc.root)
    if why is None and _meaning(post) != _meaning(pre):
        why = "formatting would change the plan's meaning (please report this)"
    return why, post


def _loaded(body: str) -> Any:
    """The compile result of ``body`` when its YAML loads, else
    :class:`FormatError`."""
    from loopc.pipeline import compile_source

    pre = compile_source(body)
    yaml_errors = [d for d in pre.diagnostics if d.code.startswith("LP1") and d.is_error]
    doc = pre.check.document if pre.check is not None else None
    if yaml_errors or doc is None or doc.root is None:
        first = yaml_errors[0] if yaml_errors else None
        why = f": {first.code} {first.message}" if first is not None else ""
        raise FormatError(f"the YAML does not load{why}; fix it first (loopc check)", "YAML does not load")
    return pre


#: white space at the end of a line (ruamel.yaml's pure-Python scanner
#: refuses a tab there, which libyaml and loopc accept)
_TRAILING = re.compile(r"[ \t]+(?=\r\n|\r|\n|\Z)")


def _one_line(exc: BaseException) -> str:
    """``type: problem (line L, column C)`` of a ruamel.yaml error, on one
    line."""
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    text = " ".join(str(problem if problem else exc).split())
    if mark is not None and getattr(mark, "line", None) is not None:
        text += f" (line {mark.line + 1}, column {mark.column + 1})"
    return f"{type(exc).__name__}: {text}"


def _format(body: str, pre: Any) -> tuple[str, Any]:
    """``(out, post)``: the checked formatting of ``body`` (BOM-less; ``pre``
    its compile result) and the compile result of ``out`` (``pre`` when
    nothing changes).  Raises :class:`FormatError`."""
    root = pre.check.document.root
    try:
        try:
            out = _layout(body, root)
        except Exception:  # noqa: BLE001 - e.g. a tab after `key:`: retry without trailing white space
            out = _layout(_TRAILING.sub("", body), root)  # the net below still compares with ``body``
        problem, post = (None, pre) if out == body else _problem(body, pre, out)
        if problem is not None and problem.startswith("formatting would change the value"):
            # a trailing space of a block scalar's line is content: keep
            # every line's end as ruamel wrote it and try again
            kept = _layout(body, root, strip=False)
            again, again_post = (None, pre) if kept == body else _problem(body, pre, kept)
            if again is None:
                out, problem, post = kept, None, again_post
    except Exception as exc:  # noqa: BLE001 - any ruamel failure means: leave the file alone
        raise FormatError(f"cannot round-trip this YAML: {_one_line(exc)}", "cannot round-trip") from None
    if problem is not None:
        raise FormatError(f"{problem}; left unchanged", "refused by the safety net")
    return out, post


def format_source(text: str) -> str:
    """The canonical formatting of ``text`` (a plan's decoded source; a
    leading BOM is kept).

    Raises :class:`FormatError` (one line, saying why; the caller leaves the
    source as it is) when the YAML does not load (loopc reports an LP1xxx
    error), or when the safety net refuses the result: the formatted text
    must parse to the same values (types included) and hold the same
    comments in the same order, and compile to the same semantic digest (or,
    for a plan with errors, give the same diagnostic codes)."""
    bom = text.startswith("\ufeff")
    body = text[1:] if bom else text
    out, _ = _format(body, _loaded(body))
    return ("\ufeff" if bom else "") + out


#: the top-level sections whose block-sequence items are formatted one by one
ITEM_SECTIONS = ("nodes", "edges")


def _line_start(text: str, offset: int) -> int:
    return max(text.rfind("\n", 0, offset), text.rfind("\r", 0, offset)) + 1


def units(text: str, root: Any) -> list[tuple[tuple[Any, ...], int]] | None:
    """The pieces range formatting re-emits whole, as ``(name, start)`` in
    document order, each running from its ``start`` (a line start, a
    code-point offset of ``text``) to the next one's: ``("",)`` what comes
    before the first top-level key, ``(key,)`` each top-level section (for
    a block-style ``nodes:``/``edges:``, its key line up to the first item)
    and ``(key, i)`` item ``i`` of ``nodes``/``edges``.  ``root`` is loopc's
    YAML tree of ``text``; ``None`` when the pieces do not fall on lines of
    their own (a flow-style document, two items on one line)."""
    from loopc.compiler.yamlnodes import YMap, YSeq

    if not isinstance(root, YMap) or root.flow:
        return None
    found: list[tuple[tuple[Any, ...], int]] = [(("",), 0)]
    for j in range(0, len(root.kv), 2):
        key, value = root._key(j), root.kv[j + 1]
        found.append(((key.value,), _line_start(text, key.start)))
        if key.value in ITEM_SECTIONS and isinstance(value, YSeq) and not value.flow:
            for i, item in enumerate(value.items):
                found.append(((key.value, i), _line_start(text, item.start)))
    starts = [s for _, s in found]
    if any(b <= a for a, b in zip(starts[1:], starts[2:])):
        return None
    return found


def format_range(text: str, start: int, end: int) -> str:
    """``text`` with the pieces (:func:`units`) that the range ``[start,
    end)`` of code-point offsets touches re-emitted whole exactly as
    :func:`format_source` writes them (an empty range touches the piece it
    is in; a range ending at a line start does not touch that line), the
    others as they are.  When the result would not be safe on its own (a
    mixed indentation, a comment that moves between pieces: the same safety
    net as :func:`format_source`), the whole formatted document.  Offsets
    count a leading BOM, as the editor's text does.  :func:`format_source`
    of the result is :func:`format_source` of ``text`` (a property test
    holds it).  Raises :class:`FormatError` exactly when
    :func:`format_source` does (docs/api.md#formatting-a-plan)."""
    bom = text.startswith("\ufeff")
    body = text[1:] if bom else text
    shift = 1 if bom else 0
    start, end = max(0, start - shift), max(0, end - shift)
    pre = _loaded(body)
    out, post = _format(body, pre)
    head = "\ufeff" if bom else ""
    if out == body:
        return text
    before = units(body, pre.check.document.root)
    after = units(out, post.check.document.root)
    if before is None or after is None or [n for n, _ in before] != [n for n, _ in after]:
        return head + out
    ends_before = [s for _, s in before[1:]] + [len(body)]
    ends_after = [s for _, s in after[1:]] + [len(out)]
    pieces: list[str] = []
    for (_, s), e, (_, fs), fe in zip(before, ends_before, after, ends_after):
        touched = (s <= start < e) if start >= end else (s < end and start < e)
        pieces.append(out[fs:fe] if touched else body[s:e])
    mixed = "".join(pieces)
    if mixed == out:
        return head + out
    if mixed == body:
        return text
    problem, _ = _problem(body, pre, mixed)
    return head + (out if problem is not None else mixed)


def formatted_bytes(data: bytes) -> tuple[str, str | None, FormatError | None]:
    """``(text, new, problem)`` for a plan file's bytes: its UTF-8 text, the
    canonical formatting (``None`` when it cannot be formatted) and why not
    (a :class:`FormatError`: one-line message and reason; ``None`` when
    formatted).  Never raises."""
    from loopc.compiler.yamlload import MAX_SOURCE_BYTES

    if len(data) > MAX_SOURCE_BYTES:
        why = f"larger than the {MAX_SOURCE_BYTES:,}-byte source budget (LP1010); left unchanged"
        return "", None, FormatError(why, "too large")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "", None, FormatError("not UTF-8 text (LP1002); fix it first (loopc check)", "not UTF-8")
    try:
        return text, format_source(text), None
    except FormatError as exc:
        return text, None, exc
