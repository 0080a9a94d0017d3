"""Execution-plan commands of the ``loopc`` CLI (docs/plan.md#cli).

* ``loopc plan FILE [--catalog F] [--profile P] [--format text|json]`` — exit
  0 with the plan; 1 when the source has errors, the catalog is rejected or
  the requested profile cannot be proven; 2 when a file is unreadable.
* ``loopc catalog`` — the built-in catalog as JSON, in exactly the format
  ``--catalog`` accepts.
* ``loopc inventory PATH... [--catalog F] [--format text|json]
  [--include/--exclude GLOB]`` — the compile-only inventory of the plans
  ``loopc check`` would check there (its walker, configuration and plan
  detection; a progress bar on a TTY only).  Exit 0; 1 when a plan is
  rejected with an error (a profile verdict is not one); 2 when a path is
  unreadable, missing or holds no YAML file, or the configuration is
  invalid (2 wins).
"""

from __future__ import annotations

import sys
from typing import Any

import attrs
import click

from loopc.cli.walk import path_filter_options
from loopc.cli.color import color_option

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
    shown = [tuple(escape_text(c) for c in r) for r in rows]  # names from the plan and the catalog
    widths = [max(len(r[i]) for r in shown) for i in range(len(shown[0]) - 1)]
    for sr in shown:
        out.append("  " + "  ".join(c.ljust(w) for c, w in zip(sr, widths)) + "  " + sr[-1])
    b = plan.bounds
    out.append(
        f"  bounds: {b.activations} activations, {b.attempts} attempts, {b.effects} effects, "
        f"{b.state_writes} Run-state writes, fan-out {b.fan_out}, lock classes "
        f"{escape_text(','.join(b.lock_classes), inline=True) or '-'}"
    )
    for p, v in plan.profiles.items():
        mark = "eligible" if v.eligible else f"blocked by {len(v.blockers)}"
        first = ""
        if v.blockers:
            x = v.blockers[0]
            first = escape_text(f" — first: {x.node or 'plan'} {x.field}={x.value}", inline=True)
        out.append(f"  {p}: {mark}{first}")
    return "\n".join(out)


@click.command("plan")
@click.argument("file")
@click.option(
    "--catalog", "catalog_path", metavar="F", help="Complete catalog file (JSON or YAML) replacing the built-in one."
)
@click.option("--profile", type=click.Choice(PROFILE_CHOICES), help="Requested execution profile (must be provable).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@color_option
def plan_cmd(file: str, catalog_path: str | None, profile: str | None, fmt: str, color: str) -> None:
    """Derive the execution plan of FILE."""
    from loopc.cli.formats.json import dumps
    from loopc.cli.formats.text import format_text, source_lines
    from loopc.compiler.yamlload import MAX_SOURCE_BYTES
    from loopc.plan.api import plan_source

    catalog = _catalog(catalog_path)
    data = _read(file, MAX_SOURCE_BYTES)
    res = plan_source(data, catalog=catalog, profile=profile, path=None if file == "-" else file)
    if fmt == "json":
        click.echo(dumps(res.to_json(), indent=2, sort_keys=True))
    if res.diagnostics:
        doc = getattr(getattr(res.compile, "check", None), "document", None)
        from loopc.cli.color import use_color

        lines = source_lines(doc.text if doc is not None else None)
        colored = use_color(color, sys.stderr)
        click.echo(format_text(file, res.diagnostics, lines, color=colored), err=True, color=colored or None)
    if fmt == "text" and res.plan is not None:
        click.echo(_text_plan(file, res))
    sys.exit(0 if res.ok else 1)


@click.command("catalog")
def catalog_cmd() -> None:
    """Print the built-in capability catalog (the --catalog file format)."""
    from loopc.plan.catalog import builtin_catalog

    click.echo(builtin_catalog().to_text(), nl=False)


@click.command("inventory")
@click.argument("paths", nargs=-1, required=True)
@click.option("--catalog", "catalog_path", metavar="F", help="Complete catalog file replacing the built-in one.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@path_filter_options("take")
def inventory_cmd(
    paths: tuple[str, ...], catalog_path: str | None, fmt: str, exclude: tuple[str, ...], include: tuple[str, ...]
) -> None:
    """Compile-only inventory of the plans in PATHS (files or directories).

    Files are found as `loopc check` finds them (same walker, configuration,
    --include/--exclude and plan detection).  Exit 0, 1 when a plan is
    rejected with an error, 2 when a path is unreadable or the configuration
    is invalid (2 wins)."""
    from loopc.cli.check import collect, render
    from loopc.cli.config import config_or_exit
    from loopc.cli.formats.json import dumps
    from loopc.cli.textsafe import escape_lines, escape_text
    from loopc.plan.inventory import inventory

    if "-" in paths:
        raise click.UsageError("inventory reads files and directories, not stdin ('-')")
    config = config_or_exit(exclude=exclude, include=include)
    catalog = _catalog(catalog_path)
    notes: list[str] = []
    found = collect(paths, config, stdin_filename=None, shard=None, note=notes.append)
    for n in notes:
        click.echo(n, err=True)
    unreadable = [(f.path, f.error) for f in found if f.error is not None]
    not_plans = [f for f in found if f.error is None and f.data is None]
    if not_plans:  # named files that are not plans: check's one LP1014 each, on stderr
        click.echo(render("text", not_plans)[0].rstrip("\n"), err=True)
    sources = [(f.path, f.data) for f in found if f.data is not None]
    progress = None
    if sys.stderr.isatty() and sources:
        from rich.console import Console
        from rich.progress import Progress

        progress = Progress(console=Console(stderr=True), transient=True)
    if progress is not None:
        with progress:
            task = progress.add_task("planning", total=len(sources))
            report = inventory(sources, catalog=catalog, on_file=lambda _p: progress.advance(task))
    else:
        report = inventory(sources, catalog=catalog)
    report = attrs.evolve(report, unreadable=tuple(unreadable) + report.unreadable)
    if report.unreadable:
        for p, msg in report.unreadable:
            click.echo(f"loopc: {escape_text(p)}: {msg}", err=True)
    if fmt == "json":
        click.echo(dumps(report.to_json(), indent=2, sort_keys=True))
    else:

        def esc(v: Any) -> Any:
            return escape_text(v, inline=True) if isinstance(v, str) else v

        # every name and message from the plans escaped on its own (a raw line break in a plan key
        # must not start a line of its own), then each line of the report
        items = tuple(
            attrs.evolve(
                i,
                path=escape_text(i.path),
                rejections=tuple(esc(r) for r in i.rejections),
                blockers=tuple({k: esc(v) for k, v in b.items()} for b in i.blockers),
            )
            for i in report.items
        )
        click.echo(escape_lines(attrs.evolve(report, items=items).to_text()))
    not_plan_errors = any(d.is_error for f in not_plans for d in f.diagnostics)  # --warnings-as-errors in config
    sys.exit(2 if report.unreadable else 1 if report.rejected or not_plan_errors else 0)


def register(group: click.Group) -> None:
    """Add ``plan``, ``catalog`` and ``inventory`` to the ``loopc`` group."""
    group.add_command(plan_cmd)
    group.add_command(catalog_cmd)
    group.add_command(inventory_cmd)
