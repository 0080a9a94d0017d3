"""Hover (docs/editors.md#features): Markdown describing the symbol under
the cursor — a node (kind, label, contracts, ports), a port (its output
contract), a field (type, flags, description) — or else the resolved type
of the ``ref:`` path there, followed by the explanation of each diagnostic
code the front end reports at the cursor.  Plain data: :class:`Hover`.
"""

from __future__ import annotations

from typing import Any, Iterable

import attrs

from loopc.compiler.symbols import Symbol
from loopc.diagnostics import value_text
from loopc.ide.document import Document, Range


@attrs.frozen
class Hover:
    """``markdown`` (parts separated by horizontal rules) and the editor
    ``range`` of the symbol or path it describes (``None``: only diagnostic
    codes)."""

    markdown: str
    range: Range | None = None


def _contract_md(contract: Any) -> str:
    from loopc.compiler import types as T

    if not contract:
        return "  *(none)*"
    rows = []
    for name, fs in contract.items():
        flags = []
        if fs.required:
            flags.append("required")
        if fs.has_default:
            flags.append("default")
        rows.append(f"  - `{name}`: {T.describe(T.type_of_field(fs))}" + (f" ({', '.join(flags)})" if flags else ""))
    return "\n".join(rows)


def _owner_contract(plan: Any, owner: str) -> tuple[str, Any]:
    from loopc.compiler.ports import effective_input

    if owner.startswith("plan."):
        what = owner.split(".", 1)[1]
        return f"the Plan {what}", getattr(plan, what, None)
    nid, _, which = owner.partition(":")
    node = plan.nodes.get(nid)
    if node is None:
        return owner, None
    cfg = node.config
    if which == "input":
        return f"the input of '{nid}'", effective_input(node, plan.output)
    if which == "callbackOutput":
        return f"the callback output of '{nid}'", getattr(cfg, "callback_output", None)
    if which == "result":
        return f"the result of join '{nid}'", getattr(cfg, "result", None)
    if which == "state":
        return f"the state of loop '{nid}'", getattr(cfg, "state", None)
    return owner, None


def describe_symbol(plan: Any, sym: Symbol) -> str | None:
    """Markdown hover text of a symbol of ``plan``'s symbol index, or
    ``None`` (a symbol the plan no longer has)."""
    from loopc.compiler import types as T
    from loopc.compiler.ports import effective_input, output_contract, source_ports, target_ports

    if sym.kind == "node":
        node = plan.nodes.get(sym.name)
        if node is None:
            return None
        lines = [f"**node `{node.id}`** — `{node.type}`"]
        if node.label:
            lines.append(f"\n{node.label}")
        if node.description:
            lines.append(f"\n{node.description}")
        lines.append("\ninput:\n" + _contract_md(effective_input(node, plan.output)))
        outs = []
        for p in source_ports(node):
            oc = output_contract(node, p)
            fields = ", ".join(f"`{k}`: {T.describe(T.type_of_field(v))}" for k, v in (oc or {}).items())
            outs.append(f"  - `{p}`" + (f" → {{{fields}}}" if fields else ""))
        lines.append("\nsource ports:\n" + ("\n".join(outs) if outs else "  *(none)*"))
        lines.append("\ntarget ports: " + ", ".join(f"`{p}`" for p in target_ports(node)))
        return "\n".join(lines)
    if sym.kind == "port":
        node = plan.nodes.get(sym.owner)
        if node is None:
            return None
        port = sym.name
        if port in source_ports(node):
            oc = output_contract(node, port)
            body = "\n\n`output.*`:\n" + _contract_md(oc) if oc is not None else "\n\ncarries nothing under `output.*`"
            return f"**port `{port}`** — source port of `{node.type}` node `{node.id}`{body}"
        if port in target_ports(node):
            return f"**port `{port}`** — target port of `{node.type}` node `{node.id}`"
        return None
    if sym.kind == "field":
        where, contract = _owner_contract(plan, sym.owner)
        fs = (contract or {}).get(sym.name) if contract is not None else None
        if fs is None:
            return f"**field `{sym.name}`** of {where}"
        flags = []
        if fs.required:
            flags.append("required")
        if fs.has_default:
            flags.append(f"default `{value_text(fs.default)}`")
        text = f"**field `{sym.name}`**: {T.describe(T.type_of_field(fs))}" + (
            f" ({', '.join(flags)})" if flags else ""
        )
        text += f"\n\nof {where}"
        if fs.description:
            text += f"\n\n{fs.description}"
        return text
    return None


def describe_code(code: str) -> str | None:
    """Markdown of a diagnostic code: code, name, severity, title and the
    first paragraph of its explanation; ``None`` for an unknown code."""
    from loopc import codes

    try:
        c = codes.get(code)
    except KeyError:
        return None
    expl = c.explanation.strip().split("\n\n", 1)[0]
    return f"**{c.code}** `{c.name}` ({c.severity.value}): {c.title}\n\n{expl}"


def ref_type_at(doc: Document, offset: int) -> tuple[str, Range] | None:
    """The resolved type of the ``ref:`` path at editor ``offset``, from the
    type pass (covers paths with no declaration in the plan: ``item.*``,
    ``loop.iteration``, ``output.code``, ``winner.key``, ``items``)."""
    from loopc.compiler import types as T
    from loopc.compiler.model import Ref
    from loopc.compiler.yamlnodes import YScalar

    types = getattr(doc.result, "types", None)
    if types is None:
        return None
    doc_off = doc.checked_offset(offset)
    for obj, typed in types.values.items():
        src = getattr(obj, "src", None)
        if isinstance(obj, Ref) and isinstance(src, YScalar) and src.start <= doc_off <= src.end:
            return f"`{obj.text}`: {T.describe(typed.type)}", doc.doc_range(src.start, src.end)
    return None


def hover(doc: Document, offset: int, codes: Iterable[Any] = ()) -> Hover | None:
    """The hover at editor ``offset``: the symbol there (else the type of
    the ``ref:`` path there), then :func:`describe_code` of each of
    ``codes`` (the diagnostic codes the front end shows at the cursor, in
    order; repeats skipped).  ``None`` when there is nothing to say."""
    from loopc.ide.symbols import occurrence_at

    parts: list[str] = []
    rng: Range | None = None
    if doc.plan is not None:
        hit = occurrence_at(doc, offset)
        if hit is not None:
            occ = hit[1]
            text = describe_symbol(doc.plan, occ.symbol)
            if text:
                parts.append(text)
                rng = doc.doc_range(occ.start, occ.end)
    if not parts and doc.plan is not None:
        ref = ref_type_at(doc, offset)
        if ref is not None:
            parts.append(ref[0])
            rng = ref[1]
    seen = set()
    for code in codes:
        if code not in seen:
            seen.add(str(code))
            text = describe_code(str(code))
            if text:
                parts.append(text)
    if not parts:
        return None
    return Hover("\n\n---\n\n".join(parts), rng)
