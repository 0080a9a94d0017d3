"""docs/node-kinds.md, generated from the node-kind registry.

Regenerated with the goldens (``python tools/regen.py`` in a checkout) and
checked by the test-suite; ``python -m loopc.kinds`` prints it.
"""

from __future__ import annotations

from loopc.kinds import KINDS
from loopc.kinds.base import OPTIONAL_PORTS, Kind

__all__ = ["markdown"]


def _keys(k: Kind) -> str:
    parts = []
    for name, f in k.source.items():
        s = f"`{name}`"
        if f.required:
            s += " (required)"
        if f.choices:
            s += ": " + " \\| ".join(f"`{c}`" for c in f.choices)
        if f.bounds:
            s += f": integer {f.bounds[0]}..{f.bounds[1]:,}"
        if f.form not in ("literal", "structure"):
            s += f" — {f.form}"
            if f.type:
                s += f", `{f.type}`"
            if f.render:
                s += ", rendered as text"
        parts.append(s)
    return "<br>".join(parts)


def _wire(k: Kind) -> str:
    return ", ".join(f"`{n}`" + (f" (v{f.since})" if f.since > 1 else "") for n, f in k.wire.fields.items())


def _ports(k: Kind) -> str:
    p = k.ports
    if p.authored:
        names = ["the author's " + ("cases and default" if p.authored == "ports" else "branches")]
    else:
        names = []
        for port in p.fixed:
            s = f"`{port}`"
            if port in p.conditional:
                s += f" (with `{p.conditional[port]}`)"
            if port in OPTIONAL_PORTS:
                s += " (optional)"
            names.append(s)
    src = ", ".join(names) or "none"
    return f"{src}; targets {', '.join(f'`{t}`' for t in p.targets)}"


def markdown() -> str:
    """The node-kind reference as Markdown."""
    out = [
        "# Node kinds",
        "",
        "<!-- Generated from src/loopc/kinds/ by `python tools/regen.py`; do not edit. -->",
        "",
        "Each node kind is declared once, in a module of its own under `src/loopc/kinds/`; the checker's",
        "tables, the source and artifact JSON Schemas, artifact version selection and the port tables",
        "are derived from those declarations (docs/architecture.md).",
        "",
        "| type | config key | since | retry | ports | effects |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for k in KINDS.values():
        out.append(
            f"| `{k.name}` | `{k.config_key}` | v{k.since} | {'yes' if k.retry else 'no'} | {_ports(k)} | {k.effects} |"
        )
    for k in KINDS.values():
        out += ["", f"## `{k.name}`", "", k.summary, "", f"Source keys of `{k.config_key}`: {_keys(k)}.", ""]
        out.append(f"Artifact config fields (artifact version that introduced them): {_wire(k)}.")
        if k.ports.outputs:
            out += ["", "Port outputs (`output.*`):", ""]
            out += [f"* `{port}` — {what}" for port, what in k.ports.outputs.items()]
    return "\n".join(out) + "\n"
