"""Execution-plan commands of the ``loopc`` CLI (docs/plan.md#cli).

* ``loopc plan FILE [--catalog F] [--profile P] [--format text|json]`` — exit
  0 with the plan; 1 when the source has errors, the catalog is rejected or
  the requested profile cannot be proven; 2 when a file is unreadable.
* ``loopc catalog`` — the built-in catalog as JSON, in exactly the format
  ``--catalog`` accepts.
* ``loopc inventory DIR [--catalog F] [--format text|json]`` — the
  compile-only inventory of a tree of plans (a progress bar on a TTY only).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click

PROFILE_CHOICES = ("embedded_before_save", "bounded_atomic", "durable_orchestration")


def _read(path: str, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of ``path`` (``-`` = stdin); exit 2 when
    unreadable (:func:`loopc.cli.inputs.read_input`)."""
    from loopc.cli.inputs import read_input

    return read_input(path, limit)


def _catalog(path: str | None) -> Any:
    """The catalog of ``--catalog`` (exit 2 unreadable, 1 rejected) or None."""
    if path is None:
        return None
    from loopc.cli.formats.text import format_text, source_lines
    from loopc.cli.textsafe import escape_text
    from loopc.plan.catalog import MAX_CATALOG_BYTES, load_catalog

    data = _read(path, MAX_CATALOG_BYTES)
    res = load_catalog(data, path=path)
    if res.diagnostics:
        click.echo(format_text(path, res.diagnostics, source_lines(data.decode("utf-8", "replace"))), err=True)
    if not res.ok:
        click.echo(f"loopc: {escape_text(path)}: catalog rejected", err=True)
        sys.exit(1)
    return res.catalog


def _text_plan(path: str, res: Any) -> str:
    from loopc.cli.textsafe import escape_text

    plan = res.plan
    out = [
        f"{escape_text(path)}: {plan.profile or 'no profile'} (requested: {plan.requested_profile or 'none'})",
        f"  artifact {plan.artifact_digest}",
        f"  plan     {plan.identity or '-'}",
        f"  catalog  {plan.catalog.digest}",
    ]
    rows = [("STEP", "KIND", "NODES", "NEXT", "CKPT", "RESOURCES")]
    for s in plan.steps:
        j = s.to_json()
        res_txt = ",".join(f"{r['class']}/{r['record']}" for r in j["resources"]) or "-"
        rows.append(
            (
                s.key,
                s.kind,
                ",".join(s.nodes),
                ",".join(j["next"]) or "-",
                "yes" if s.checkpoint_after else "no",
                res_txt,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for r in rows:
        out.append("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1])
    b = plan.bounds
    out.append(
        f"  bounds: {b.activations} activations, {b.attempts} attempts, {b.effects} effects, "
        f"{b.state_writes} Run-state writes, fan-out {b.fan_out}, lock classes "
        f"{','.join(b.lock_classes) or '-'}"
    )
    for p, v in plan.profiles.items():
        mark = "eligible" if v.eligible else f"blocked by {len(v.blockers)}"
        first = ""
        if v.blockers:
            x = v.blockers[0]
            first = f" — first: {x.node or 'plan'} {x.field}={x.value}"
        out.append(f"  {p}: {mark}{first}")
    return "\n".join(out)


@click.command("plan")
@click.argument("file")
@click.option(
    "--catalog", "catalog_path", metavar="F", help="Complete catalog file (JSON or YAML) replacing the built-in one."
)
@click.option("--profile", type=click.Choice(PROFILE_CHOICES), help="Requested execution profile (must be provable).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def plan_cmd(file: str, catalog_path: str | None, profile: str | None, fmt: str) -> None:
    """Derive the execution plan of FILE."""
    from loopc.cli.formats.json import utf8_json
    from loopc.cli.formats.text import format_text, source_lines
    from loopc.compiler.yamlload import MAX_SOURCE_BYTES
    from loopc.plan.api import plan_source

    catalog = _catalog(catalog_path)
    data = _read(file, MAX_SOURCE_BYTES)
    res = plan_source(data, catalog=catalog, profile=profile, path=None if file == "-" else file)
    if fmt == "json":
        click.echo(json.dumps(utf8_json(res.to_json()), ensure_ascii=False, indent=2, sort_keys=True))
    if res.diagnostics:
        doc = getattr(getattr(res.compile, "check", None), "document", None)
        click.echo(format_text(file, res.diagnostics, source_lines(doc.text if doc is not None else None)), err=True)
    if fmt == "text" and res.plan is not None:
        click.echo(_text_plan(file, res))
    sys.exit(0 if res.ok else 1)


@click.command("catalog")
def catalog_cmd() -> None:
    """Print the built-in capability catalog (the --catalog file format)."""
    from loopc.plan.catalog import builtin_catalog

    click.echo(builtin_catalog().to_text(), nl=False)


def _plan_files(root: str) -> list[str]:
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not x.startswith("."))
        out += [os.path.join(d, f) for f in sorted(files) if f.endswith((".yaml", ".yml"))]
    return out


@click.command("inventory")
@click.argument("directory")
@click.option("--catalog", "catalog_path", metavar="F", help="Complete catalog file replacing the built-in one.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def inventory_cmd(directory: str, catalog_path: str | None, fmt: str) -> None:
    """Compile-only inventory of every plan under DIRECTORY."""
    from loopc.cli.formats.json import utf8_json
    from loopc.cli.textsafe import escape_lines, escape_text
    from loopc.plan.inventory import inventory

    if not os.path.isdir(directory):
        click.echo(f"loopc: {escape_text(directory)}: not a directory", err=True)
        sys.exit(2)
    catalog = _catalog(catalog_path)
    files = _plan_files(directory)
    progress = None
    if sys.stderr.isatty() and files:
        from rich.console import Console
        from rich.progress import Progress

        progress = Progress(console=Console(stderr=True), transient=True)
    if progress is not None:
        with progress:
            task = progress.add_task("planning", total=len(files))
            report = inventory(files, catalog=catalog, on_file=lambda _p: progress.advance(task))
    else:
        report = inventory(files, catalog=catalog)
    if report.unreadable:
        for p, msg in report.unreadable:
            click.echo(f"loopc: {escape_text(p)}: {msg}", err=True)
    if fmt == "json":
        click.echo(json.dumps(utf8_json(report.to_json()), ensure_ascii=False, indent=2, sort_keys=True))
    else:
        import attrs

        shown = attrs.evolve(report, items=tuple(attrs.evolve(i, path=escape_text(i.path)) for i in report.items))
        click.echo(escape_lines(shown.to_text()))
    sys.exit(2 if report.unreadable else 0)


def register(group: click.Group) -> None:
    """Add ``plan``, ``catalog`` and ``inventory`` to the ``loopc`` group."""
    group.add_command(plan_cmd)
    group.add_command(catalog_cmd)
    group.add_command(inventory_cmd)
