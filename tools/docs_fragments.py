"""Docs text that restates a declaration, generated between markers
(docs/architecture.md#regeneration); ``python tools/regen.py`` rewrites it.

In a page under ``docs/``, a fragment is written as

    <!-- regen:NAME -->generated text<!-- /regen:NAME -->

(inline, or with the text on lines of its own); the text between the two
markers is what :data:`FRAGMENTS` renders for ``NAME``, and nothing else in
the page is touched.  Markdown renders neither marker.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

_MARKED = re.compile(r"(<!-- regen:([a-z0-9-]+) -->)(.*?)(<!-- /regen:\2 -->)", re.S)


def _latest() -> int:
    from loopc.ir.versions import LATEST

    return LATEST


def _range() -> str:
    return f"v1–v{_latest()}"


def _envelopes() -> str:
    return f"`loop.plan.artifact/v1`…`v{_latest()}`"


def _numbers() -> str:
    return f"1…{_latest()}"


def _schema_files() -> str:
    return f"`docs/schema/loop.plan.artifact.v1.schema.json` … `v{_latest()}`"


def features_by_version() -> dict[int, list[str]]:
    """Every feature of the artifact surface newer than v1, by the version
    that introduced it: fields, union variants, alternatives, enum values,
    type kinds and reference roots, named by the surface definition
    (:data:`loopc.ir.surface.DEFS`) that holds them."""
    from loopc.ir import surface
    from loopc.kinds.spec import F, Arr, ByType, InstrArr, MapOf, Obj, Str, Tagged, TypeDesc

    found: dict[int, set[str]] = defaultdict(set)
    for name, spec in surface.DEFS.items():
        todo: list[tuple[object, str]] = [(spec, f"`{name}`")]
        while todo:
            s, at = todo.pop()
            if isinstance(s, F):
                if s.since > 1:
                    found[s.since].add(at)
                todo.append((s.spec, at))
            elif isinstance(s, Obj):
                todo.extend((f, f"{at[:-1]}.{k}`") for k, f in s.fields.items())
            elif isinstance(s, Tagged):
                for tag, (obj, since) in s.variants.items():
                    if since > 1:
                        found[since].add(f"{at[:-1]}.{s.tag}` `{tag}`")
                    todo.append((obj, at))
                todo.extend((f, f"{at[:-1]}.{k}`") for k, f in s.common.items())
            elif isinstance(s, ByType):
                for alt, (a, since) in s.alts.items():
                    if since > 1:
                        found[since].add(f"{at} as {alt}")
                    todo.append((a, at))
            elif isinstance(s, Arr):
                todo.append((s.items, at))
            elif isinstance(s, MapOf):
                todo.append((s.values, at))
            elif isinstance(s, Str) and s.enum:
                for v, since in s.enum.items():
                    if since > 1:
                        found[since].add(f"{at} `{v}`")
            elif isinstance(s, InstrArr):
                for k, since in s.kinds.items():
                    if since > 1:
                        found[since].add(f"type kind `{k}`")
                for k, since in s.roots.items():
                    if since > 1:
                        found[since].add(f"reference root `{k}`")
            elif isinstance(s, TypeDesc):
                for k, since in s.kinds.items():
                    if since > 1:
                        found[since].add(f"type kind `{k}`")
    return {v: sorted(found[v]) for v in sorted(found)}


def _version_table() -> str:
    from loopc.ir.versions import VERSIONS

    feats = features_by_version()
    rows = [
        "",
        "| version | introduces (anywhere in the artifact; generated from the declarations) |",
        "|---|---|",
        "| v1 | everything not listed below |",
    ]
    rows += [f"| v{v} | {', '.join(feats.get(v, [])) or '—'} |" for v in VERSIONS if v > 1]
    return "\n".join(rows) + "\n"


def _instr_paths(spec: object, at: str, out: list[str]) -> None:
    """The paths inside a config's wire spec that hold an instruction tree,
    in declaration order (``[*]`` an array item, ``.*`` a map value)."""
    from loopc.kinds.spec import F, Arr, ByType, MapOf, Obj, Ref, Tagged

    if isinstance(spec, F):
        _instr_paths(spec.spec, at, out)
    elif isinstance(spec, Obj):
        for k, f in spec.fields.items():
            _instr_paths(f, f"{at}.{k}" if at else k, out)
    elif isinstance(spec, Tagged):
        for k, f in spec.common.items():
            _instr_paths(f, f"{at}.{k}", out)
        for obj, _ in spec.variants.values():
            _instr_paths(obj, at, out)
    elif isinstance(spec, ByType):
        for alt, _ in spec.alts.values():
            _instr_paths(alt, at, out)
    elif isinstance(spec, Arr):
        _instr_paths(spec.items, at + "[*]", out)
    elif isinstance(spec, MapOf):
        _instr_paths(spec.values, at + ".*", out)
    elif isinstance(spec, Ref) and spec.name == "Instr" and at not in out:
        out.append(at)


def _instr_places() -> str:
    from loopc.kinds import KINDS

    parts = []
    for op, kind in KINDS.items():
        paths: list[str] = []
        _instr_paths(kind.wire, "", paths)
        if paths:
            parts.append(f"`{op}` `{' '.join(paths)}`")
    return "; ".join(parts)


def _node_kinds_table() -> str:
    """docs/reference.md#nodes: each kind's config key and ports, from its
    declaration (:class:`loopc.kinds.base.Kind`)."""
    from loopc.kinds import KINDS

    authored = {"ports": "one per case, plus the default", "branches": "one per branch key"}
    rows = ["", "| `type` | config key | source ports | target ports |", "|---|---|---|---|"]
    for k in KINDS.values():
        p = k.ports
        if p.authored:
            sources = authored[p.authored]
        else:
            names = [f"`{n}`" + (f" (with `{p.conditional[n]}`)" if n in p.conditional else "") for n in p.fixed]
            sources = ", ".join(names) or "none"
        targets = ", ".join(f"`{t}`" for t in p.targets)
        rows.append(f"| `{k.name}` | `{k.config_key}` | {sources} | {targets} |")
    return "\n".join(rows) + "\n"


#: fragment name -> its text
FRAGMENTS: dict[str, Callable[[], str]] = {
    "artifact-versions": _range,
    "artifact-envelopes": _envelopes,
    "artifact-version-numbers": _numbers,
    "artifact-schema-files": _schema_files,
    "artifact-versions-table": _version_table,
    "config-instruction-places": _instr_places,
    "node-kinds-table": _node_kinds_table,
}


def fragment_files(docs: Path = DOCS) -> tuple[dict[Path, bytes], list[str]]:
    """Every page under ``docs`` that holds a fragment, with its fragments
    rendered, and the errors (an unknown fragment name)."""
    files: dict[Path, bytes] = {}
    errors: list[str] = []
    for page in sorted(docs.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        if "<!-- regen:" not in text:
            continue

        def fill(m: re.Match[str], page: Path = page) -> str:
            render = FRAGMENTS.get(m.group(2))
            if render is None:
                errors.append(f"{page.relative_to(docs.parent)}: unknown fragment {m.group(2)!r}")
                return m.group(0)
            return m.group(1) + render() + m.group(4)

        files[page] = _MARKED.sub(fill, text).encode("utf-8")
    return files, errors
