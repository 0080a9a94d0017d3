"""``loopc`` command line (click).

``loopc check [--format NAME] PATH...`` (formats: :mod:`loopc.cli.formats`) — exit 0 when no errors
(warnings allowed), 1 when any error, 2 for usage errors or unreadable paths
(2 wins).  IR commands (``compile``, ``digest``, ``verify``) are registered
from :mod:`loopc.cli.ir_commands`.  Heavy imports happen inside commands so
that start-up stays fast.
"""
from __future__ import annotations

import os
import sys
from typing import Iterator

import click

from loopc import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="loopc")
def cli() -> None:
    """loopc — compiler and static analyzer for loop.plan/v1 workflows."""


def _expand(paths: tuple[str, ...]) -> Iterator[tuple[str, str | None]]:
    """Yield (path, error) for files; directories recurse into *.yaml/*.yml."""
    for p in paths:
        if os.path.isdir(p):
            found = False
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for f in sorted(files):
                    if f.endswith((".yaml", ".yml")):
                        found = True
                        yield os.path.join(root, f), None
            if not found:
                yield p, "no *.yaml or *.yml files found"
        elif os.path.isfile(p):
            yield p, None
        else:
            yield p, "no such file or directory"


def _format_names() -> list[str]:
    from loopc.cli import formats

    return formats.names()


@cli.command()
@click.option("--format", "fmt", type=click.Choice(_format_names()), default="text",
              show_default=True, help="Output format (see loopc/cli/formats/).")
@click.argument("paths", nargs=-1, required=True)
def check(fmt: str, paths: tuple[str, ...]) -> None:
    """Check plans (files or directories) and report every problem."""
    from loopc.cli import formats
    from loopc.compiler.driver import check_source
    from loopc.compiler.yamlload import MAX_SOURCE_BYTES

    reports: list[formats.FileReport] = []
    unreadable = False
    for path, err in _expand(paths):
        if err is not None:
            click.echo(f"loopc: {path}: {err}", err=True)
            unreadable = True
            continue
        try:
            with open(path, "rb") as fh:
                data = fh.read(MAX_SOURCE_BYTES + 1)  # one byte more is enough to diagnose LP1010
        except OSError as exc:
            click.echo(f"loopc: {path}: {exc.strerror or exc}", err=True)
            unreadable = True
            continue
        res = check_source(data, path=path)
        text = res.document.text if res.document is not None else None
        reports.append(formats.FileReport(path, tuple(res.diagnostics), text))
    fmt_impl = formats.get(fmt)
    out = fmt_impl.render(reports)
    if out:
        click.echo(out, nl=False)
    if fmt_impl.render_stderr is not None:
        note = fmt_impl.render_stderr(reports)
        if note:
            click.echo(note, nl=False, err=True)
    errors = formats.summary(reports)["errors"]
    if unreadable:
        sys.exit(2)
    sys.exit(1 if errors else 0)


@cli.command()
@click.argument("code")
def explain(code: str) -> None:
    """Explain a diagnostic code (e.g. LP2001) or its slug (e.g. state.race)."""
    from loopc import codes

    matches = [c for c in codes.all_codes() if code.upper() == c.code or code == c.name]
    if not matches:
        click.echo(f"loopc: unknown diagnostic code {code}", err=True)
        sys.exit(2)
    c = matches[0]
    click.echo(f"{c.code} {c.name} ({c.severity.value}): {c.title}\n\n{c.explanation}")
    if c.reference:
        click.echo(f"\nRule: docs/{c.reference}")
    if c.example:
        click.echo(f"\nFailing example:\n{c.example}")
    if c.fixed:
        click.echo(f"\nFixed:\n{c.fixed}")


def _register_optional() -> None:
    try:
        from loopc.cli import ir_commands
    except ImportError:  # pragma: no cover - IR commands not built yet
        return
    ir_commands.register(cli)


_register_optional()


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="loopc")


if __name__ == "__main__":  # pragma: no cover
    main()
