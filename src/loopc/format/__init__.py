"""The canonical, comment-preserving formatter of plan sources: what
``loopc fmt`` writes and the language server's ``textDocument/formatting``
returns (docs/ci.md#formatting).

The source is loaded with ruamel.yaml's round-trip loader and dumped with
loopc's layout: two-space mappings, sequences indented two with the dash at
the parent's indentation plus two (``nodes:\\n  - id: x``), one space after
``:`` and ``,``, no trailing spaces, one final newline, long lines never
wrapped; comments, key order, quoting, flow-or-block style of each
collection and block scalars are kept.  The result is checked before it is
written: it must compile to the same semantic digest (or, for a plan with
errors, give the same diagnostic codes); a source whose YAML does not load
is left alone with a message.  Formatting is idempotent.

A layer above the pipeline and below the consumers that use it (the
language server, the CLI): no I/O, never raises on bad input except
:class:`FormatError`, which says why the source is left as it is.
"""

from __future__ import annotations

import io
from typing import Any


class FormatError(Exception):
    """The source cannot be formatted safely (message says why)."""


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


def _layout(body: str, tree: Any = None) -> str:
    """The ruamel round trip with loopc's layout (no checks; may raise);
    ``tree`` is loopc's YAML tree of ``body``, whose explicit nulls are kept
    as spelt."""
    y = _yaml()
    data = y.load(body)
    if tree is not None:
        data = _keep_nulls(data, tree)
    buf = io.StringIO()
    y.dump(data, buf)
    out = "\n".join(line.rstrip() for line in buf.getvalue().splitlines())
    return out.rstrip("\n") + "\n"


def format_source(text: str) -> str:
    """The canonical formatting of ``text`` (a plan's decoded source).

    Raises :class:`FormatError` when the YAML does not load (loopc reports
    an LP1xxx error) or the formatted text would mean something else."""
    from loopc.pipeline import compile_source

    bom = text.startswith("\ufeff")
    body = text[1:] if bom else text
    pre = compile_source(body)
    yaml_errors = [d for d in pre.diagnostics if d.code.startswith("LP1") and d.is_error]
    doc = pre.check.document if pre.check is not None else None
    if yaml_errors or doc is None or doc.root is None:
        first = yaml_errors[0] if yaml_errors else None
        why = f": {first.code} {first.message}" if first is not None else ""
        raise FormatError(f"the YAML does not load{why}; fix it first (loopc check)")
    try:
        out = _layout(body, doc.root)
    except Exception as exc:  # noqa: BLE001 - any ruamel failure means: leave the file alone
        raise FormatError(f"cannot round-trip this YAML: {type(exc).__name__}: {exc}") from None
    if out != body and _meaning(compile_source(out)) != _meaning(pre):
        raise FormatError("formatting would change the plan's meaning; left unchanged (please report this)")
    return ("\ufeff" if bom else "") + out


def formatted_bytes(data: bytes) -> tuple[str, str | None, str | None]:
    """``(text, new, problem)`` for a plan file's bytes: its UTF-8 text, the
    canonical formatting (``None`` when it cannot be formatted) and why not
    (one line; ``None`` when formatted).  Never raises."""
    from loopc.compiler.yamlload import MAX_SOURCE_BYTES

    if len(data) > MAX_SOURCE_BYTES:
        return "", None, f"larger than the {MAX_SOURCE_BYTES:,}-byte source budget (LP1010); left unchanged"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "", None, "not UTF-8 text (LP1002); fix it first (loopc check)"
    try:
        return text, format_source(text), None
    except FormatError as exc:
        return text, None, str(exc)
