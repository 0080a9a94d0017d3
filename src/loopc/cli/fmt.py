"""``loopc fmt FILE... [--check]``: the command (docs/ci.md#formatting); the
formatter itself is :mod:`loopc.format`.

Exit status: 0 (all formatted, or with ``--check`` nothing to change),
1 with ``--check`` when a file would change, 2 when a file could not be read,
parsed or safely formatted.
"""

from __future__ import annotations

from collections import Counter
import sys
from typing import Any

import click

from loopc.cli.textsafe import escape_text
from loopc.format import REASONS, FormatError, formatted_bytes


@click.command("fmt")
@click.option("--check", "check_only", is_flag=True, help="Write nothing; exit 1 when a file would change.")
@click.argument("files", nargs=-1, required=True)
def fmt_command(check_only: bool, files: tuple[str, ...]) -> None:
    """Format plans canonically, keeping comments (idempotent; never changes the digest).

    FILES are plan files or directories (walked like `loopc check`: only
    files whose first line is a plan header, .gitignore respected); `-`
    formats standard input to standard output."""
    from loopc.cli.walk import discover

    if files.count("-") > 1:
        raise click.UsageError("'-' (stdin) can be named only once")
    outcomes: Counter[str] = Counter()
    if "-" in files:
        outcomes[_format_stdin(check_only)] += 1
    for entry in discover([f for f in files if f != "-"]):
        outcomes[_format_file(entry, check_only)] += 1
    click.echo(summary(outcomes, check_only), err=True)
    if any(k not in ("changed", "unchanged", "skipped") for k in outcomes):
        sys.exit(2)
    sys.exit(1 if check_only and outcomes["changed"] else 0)


def summary(outcomes: Counter[str], check_only: bool) -> str:
    """The last line of ``loopc fmt``: how many files changed, were
    unchanged and could not be formatted, by reason, e.g. ``0 file(s)
    reformatted, 0 unchanged, 1 not formatted (1 YAML does not load)``.
    ``outcomes`` counts ``"changed"``, ``"unchanged"``, ``"skipped"`` and
    every failure reason (:data:`loopc.format.REASONS`)."""
    verb = "would be reformatted" if check_only else "reformatted"
    line = f"{outcomes['changed']} file(s) {verb}, {outcomes['unchanged']} unchanged"
    failed = {k: n for k, n in outcomes.items() if k not in ("changed", "unchanged", "skipped") and n}
    if failed:
        order = {r: i for i, r in enumerate(REASONS)}
        parts = ", ".join(f"{n} {k}" for k, n in sorted(failed.items(), key=lambda kn: order.get(kn[0], len(order))))
        line += f", {sum(failed.values())} not formatted ({parts}; left unchanged)"
    return line


def _format_file(entry: Any, check_only: bool) -> str:
    """Format one discovered file (:class:`loopc.cli.walk.Entry`) in place, or
    say it would change; a walked file that is no plan is skipped.  Returns
    ``"changed"``, ``"unchanged"``, ``"skipped"`` or, when it could not be
    formatted, the reason (:data:`loopc.format.REASONS`)."""
    from loopc.boundedio import read_bounded
    from loopc.cli.inputs import reason_of
    from loopc.cli.walk import looks_like_plan
    from loopc.compiler.yamlload import MAX_SOURCE_BYTES

    shown = escape_text(entry.path)
    problem = None if entry.error is None else FormatError(entry.error, "unreadable")
    if problem is None:
        try:
            data = read_bounded(entry.path, MAX_SOURCE_BYTES)
        except OSError as exc:
            problem = FormatError(reason_of(exc), "unreadable")
    new = None
    if problem is None:
        if entry.walked and not looks_like_plan(data):
            return "skipped"  # a walked YAML file that is no plan: not ours to format
        text, new, problem = formatted_bytes(data)
    if problem is not None or new is None:
        click.echo(f"loopc: {shown}: {escape_text(str(problem))}", err=True)
        return problem.reason if problem is not None else "cannot round-trip"
    if new == text:
        return "unchanged"
    if check_only:
        click.echo(f"would reformat {shown}")
        return "changed"
    try:
        with open(entry.path, "wb") as fh:
            fh.write(new.encode("utf-8"))
    except OSError as exc:
        click.echo(f"loopc: {shown}: cannot write: {exc.strerror or exc}", err=True)
        return "cannot write"
    click.echo(f"reformatted {shown}")
    return "changed"


def _format_stdin(check_only: bool) -> str:
    """Format standard input: the result goes to standard output (the input
    unchanged when it cannot be formatted, so a pipe never loses the plan);
    with ``check_only`` nothing is written.  Returns ``"changed"``,
    ``"unchanged"`` or the reason it could not be formatted."""
    from loopc.boundedio import read_stream_bounded
    from loopc.compiler.yamlload import MAX_SOURCE_BYTES

    try:
        data = read_stream_bounded(sys.stdin.buffer, MAX_SOURCE_BYTES)
    except OSError as exc:
        click.echo(f"loopc: <stdin>: cannot read: {exc.strerror or exc}", err=True)
        return "unreadable"
    text, new, problem = formatted_bytes(data)
    if problem is not None or new is None:
        click.echo(f"loopc: <stdin>: {escape_text(str(problem))}", err=True)
        if not check_only:
            sys.stdout.buffer.write(data)
            sys.stdout.flush()
        return problem.reason if problem is not None else "cannot round-trip"
    if check_only:
        if new != text:
            click.echo("would reformat <stdin>")
    else:
        sys.stdout.buffer.write(new.encode("utf-8"))
        sys.stdout.flush()
    return "unchanged" if new == text else "changed"


def register(cli: click.Group) -> None:
    cli.add_command(fmt_command)
