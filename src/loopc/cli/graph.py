"""``loopc graph FILE --format mermaid|dot|svg``: the plan drawn
(docs/ci.md#pictures).

* nodes by kind (shape per kind; a succeeded End is a double circle, a
  failed End an octagon), labelled ``id`` and kind;
* scopes — fork and all_match branches, fan-out item bodies, loop bodies —
  as nested clusters, from the check's scope model (proven by the analyzer);
* edges labelled with their source port (and target port when it is not
  ``in``); implicit failure routes (omitted ``failed``/``timed_out`` ports
  the compiler lowers) dashed, to the closing join or to a "plan fails" node;
* ``svg`` runs Graphviz ``dot -Tsvg`` when it is installed and says so
  clearly when it is not (exit 2).

A plan that cannot be modelled (errors before the graph exists) is not drawn:
its diagnostics are summarised and the exit status is 1.
"""

from __future__ import annotations

import re
import sys
from typing import Any

import click

_DOT_SHAPE = {
    "send_message": "box",
    "set_variable": "note",
    "wait": "ellipse",
    "request_approval": "hexagon",
    "switch": "diamond",
    "fork": "trapezium",
    "join": "invtrapezium",
    "fan_out": "parallelogram",
    "loop": "cds",
}
_MERMAID_SHAPE = {
    "send_message": ('["', '"]'),
    "set_variable": ('[/"', '"/]'),
    "wait": ('("', '")'),
    "request_approval": ('{{"', '"}}'),
    "switch": ('{"', '"}'),
    "fork": ('[/"', '"\\]'),
    "join": ('[\\"', '"/]'),
    "fan_out": ('[["', '"]]'),
    "loop": ('(["', '"])'),
}
_SCOPE_TITLE = {"fork": "fork", "all_match": "all_match", "fan_out": "fan-out item", "loop": "loop body"}
_FAIL = "__plan_fails__"


class Drawing:
    """What both text formats draw, derived once from a check result."""

    def __init__(self, res: Any) -> None:
        plan = res.plan
        self.nodes: list[tuple[str, str, str]] = []  # id, kind, end status
        for nid, node in plan.nodes.items():
            status = getattr(node.config, "status", "") if node.type == "end" else ""
            self.nodes.append((nid, node.type, status))
        self.edges: list[tuple[str, str, str, bool]] = []  # from, to, label, dashed
        for e in plan.edges.values():
            if e.from_node in plan.nodes and e.to_node in plan.nodes:
                label = e.from_port if e.to_port == "in" else f"{e.from_port} → {e.to_port}"
                self.edges.append((e.from_node, e.to_node, label, False))
        analysis = res.analysis
        # clusters from the check's scope model (proven by the analyzer when it reports no error)
        stacks: dict[str, tuple] = dict(res.scopes.node_scopes) if res.scopes is not None else {}
        if analysis is not None:
            for (nid, port), sink in sorted(analysis.failure_routes.items()):
                if sink.kind == "never":
                    continue
                target = sink.join if sink.kind in ("fail_branch", "item_failed") and sink.join else _FAIL
                self.edges.append((nid, target, f"{port} (implicit)", True))
        self.fails = any(t == _FAIL for _, t, _, _ in self.edges)
        # cluster tree: frame key (kind, owner, branch) -> children / members
        self.members: dict[tuple, list[str]] = {(): []}
        self.children: dict[tuple, list[tuple]] = {(): []}
        for nid, _, _ in self.nodes:
            stack = tuple(stacks.get(nid, ()))
            path: tuple = ()
            for sc in stack:
                frame = path + ((sc.kind, sc.owner, sc.branch),)
                if frame not in self.members:
                    self.members[frame] = []
                    self.children[frame] = []
                    self.children[path].append(frame)
                path = frame
            self.members[path].append(nid)
        self.entry = plan.entry

    @staticmethod
    def title(frame: tuple) -> str:
        kind, owner, branch = frame[-1]
        t = f"{_SCOPE_TITLE.get(kind, kind)} {owner}"
        return t + (f" / {branch}" if branch else "")


def _cid(frame: tuple) -> str:
    return "cluster_" + "__".join(f"{k}_{o}_{b or ''}" for k, o, b in frame)


def _q(s: str) -> str:
    """A DOT quoted string showing ``s`` on one line: control characters,
    line breaks and ``##[`` made visible (:func:`loopc.cli.textsafe.escape_text`),
    then backslashes and quotes escaped (no ``\\n`` or ``\\N`` escape reaches
    Graphviz from a name)."""
    from loopc.cli.textsafe import escape_text

    return '"' + escape_text(s, inline=True).replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_dot(d: Drawing, name: str = "plan") -> str:
    """Graphviz DOT text."""
    kinds = {nid: (kind, status) for nid, kind, status in d.nodes}
    out = [
        f"digraph {_q(name)} {{",
        "  rankdir=TB;",
        '  node [fontname="Helvetica"];',
        '  edge [fontname="Helvetica", fontsize=10];',
    ]

    def node_line(nid: str, indent: str) -> str:
        kind, status = kinds[nid]
        if kind == "end":
            shape = "doublecircle" if status == "succeeded" else "octagon"
        else:
            shape = _DOT_SHAPE.get(kind, "box")
        extra = ", penwidth=2" if nid == d.entry else ""
        return f'{indent}{_q(nid)} [label={_q(nid)[:-1]}\\n{_q(kind)[1:]}, shape={shape}{extra}];'

    def emit(frame: tuple, indent: str) -> None:
        for child in d.children[frame]:
            out.append(f"{indent}subgraph {_q(_cid(child))} {{")
            out.append(f"{indent}  label={_q(Drawing.title(child))}; style=rounded;")
            emit(child, indent + "  ")
            out.append(f"{indent}}}")
        for nid in d.members[frame]:
            out.append(node_line(nid, indent))

    emit((), "  ")
    if d.fails:
        out.append(f'  {_q(_FAIL)} [label="plan fails", shape=plaintext, fontcolor=red];')
    for a, b, label, dashed in d.edges:
        style = ", style=dashed, color=red" if dashed else ""
        out.append(f"  {_q(a)} -> {_q(b)} [label={_q(label)}{style}];")
    out.append("}")
    return "\n".join(out) + "\n"


def _mid(nid: str) -> str:
    # Mermaid reserves words such as `end`; prefix every id
    return "n_" + "".join(ch if ch.isalnum() or ch == "_" else f"_{ord(ch):x}_" for ch in nid)


#: Characters a Mermaid label must not hold raw: ``#`` (entity codes start
#: with it), the quote ending the label, HTML (``<``, ``>``, ``&``),
#: backticks (Markdown strings) and ``|`` (edge-label delimiters); each is
#: written as a Mermaid entity code (``#35;``, ``#quot;``, ``#lt;``, ...).
_MERMAID_ENTITIES = {"#": "#35;", '"': "#quot;", "<": "#lt;", ">": "#gt;", "&": "#amp;", "`": "#96;",
                     "|": "#124;"}
_MERMAID_RE = re.compile("[#\"<>&`|]")


def _ml(s: str) -> str:
    """A Mermaid label showing ``s`` as text on one line: control characters,
    line breaks and ``##[`` made visible (:func:`loopc.cli.textsafe.escape_text`),
    then every character of :data:`_MERMAID_ENTITIES` as its entity code, so
    no name becomes HTML (``<img src=x onerror=…>``), Markdown or syntax."""
    from loopc.cli.textsafe import escape_text

    return _MERMAID_RE.sub(lambda m: _MERMAID_ENTITIES[m.group()], escape_text(s, inline=True))


def to_mermaid(d: Drawing) -> str:
    """Mermaid ``flowchart`` text."""
    kinds = {nid: (kind, status) for nid, kind, status in d.nodes}
    out = ["flowchart TD"]

    def node_line(nid: str, indent: str) -> str:
        kind, status = kinds[nid]
        if kind == "end":
            o, c = ('(("', '"))') if status == "succeeded" else ('{{"', '"}}')
        else:
            o, c = _MERMAID_SHAPE.get(kind, ('["', '"]'))
        return f"{indent}{_mid(nid)}{o}{_ml(nid)}<br/><i>{_ml(kind)}</i>{c}"

    def emit(frame: tuple, indent: str) -> None:
        for child in d.children[frame]:
            out.append(f'{indent}subgraph {_mid(_cid(child))} ["{_ml(Drawing.title(child))}"]')
            emit(child, indent + "  ")
            out.append(f"{indent}end")
        for nid in d.members[frame]:
            out.append(node_line(nid, indent))

    emit((), "  ")
    if d.fails:
        out.append(f'  {_mid(_FAIL)}["plan fails"]')
    for a, b, label, dashed in d.edges:
        arrow = f'-. "{_ml(label)}" .->' if dashed else f'-->|"{_ml(label)}"|'
        out.append(f"  {_mid(a)} {arrow} {_mid(b)}")
    if d.fails:
        out.append(f"  style {_mid(_FAIL)} color:#c00,stroke:#c00")
    return "\n".join(out) + "\n"


@click.command("graph")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["mermaid", "dot", "svg"]),
    default="mermaid",
    show_default=True,
    help="Picture format (svg needs Graphviz's dot).",
)
@click.option("-o", "--output", metavar="FILE", default=None, help="Write to FILE instead of standard output.")
@click.argument("file")
def graph_command(fmt: str, output: str | None, file: str) -> None:
    """Draw a plan: nodes by kind, scopes as clusters, implicit failure routes dashed."""
    from loopc.pipeline import check_source
    from loopc.compiler.yamlload import MAX_SOURCE_BYTES

    from loopc.cli.inputs import read_input

    data = read_input(file, MAX_SOURCE_BYTES)
    from loopc.cli.textsafe import escape_text

    shown = escape_text(file)
    res = check_source(data, path=file, lint=False)
    if res.plan is None:
        n = len(res.errors)
        first = f", first {res.errors[0].code}: {escape_text(res.errors[0].message)}" if res.errors else ""
        click.echo(
            f"loopc: {shown}: cannot draw this plan: {n} error(s) before its graph exists{first} "
            f"(run: loopc check {shown})",
            err=True,
        )
        sys.exit(1)
    drawing = Drawing(res)
    if fmt == "mermaid":
        text: str | bytes = to_mermaid(drawing)
    else:
        text = to_dot(drawing)
        if fmt == "svg":
            import shutil
            import subprocess

            dot = shutil.which("dot")
            if dot is None:
                click.echo(
                    "loopc: --format svg needs Graphviz's 'dot' program, which is not installed "
                    "(e.g. apt-get install graphviz, brew install graphviz); "
                    "--format dot or --format mermaid need nothing",
                    err=True,
                )
                sys.exit(2)
            proc = subprocess.run([dot, "-Tsvg"], input=text.encode("utf-8"), capture_output=True, timeout=120)
            if proc.returncode != 0:
                click.echo(f"loopc: dot failed: {proc.stderr.decode('utf-8', 'replace').strip()}", err=True)
                sys.exit(2)
            text = proc.stdout
    payload = text.encode("utf-8") if isinstance(text, str) else text
    if output is None:
        sys.stdout.buffer.write(payload)
        sys.stdout.flush()
    else:
        from loopc.cli.inputs import write_output

        write_output(output, payload)
    if res.errors:
        click.echo(f"loopc: note: {shown} has {len(res.errors)} error(s); the picture may be incomplete", err=True)


def register(cli: click.Group) -> None:
    cli.add_command(graph_command)
