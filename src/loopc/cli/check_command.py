"""The ``loopc check`` click command: its options and help; the body is
:func:`loopc.cli.check.run` and every option's default is
:data:`loopc.cli.check.PLAIN` (the plain form ``loopc check PATH...`` runs
without click: :func:`loopc.cli.plain_check_paths`)."""

from __future__ import annotations

from typing import Any

import click

from loopc.cli.check import PLAIN, _format_names, run
from loopc.cli.color import color_option
from loopc.cli.walk import path_filter_options


@click.command()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(_format_names()),
    default=PLAIN["fmt"],
    show_default=True,
    help="Output format (docs/ci.md describes each).",
)
@click.option(
    "-j", "--jobs", type=int, default=PLAIN["jobs"], metavar="N", help="Check files in N processes (default: all cores)."
)
@click.option(
    "--shard",
    metavar="K/N",
    default=PLAIN["shard"],
    help="Check only slice K of N of the files (sorted by path, dealt round-robin).",
)
@click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache.")
@click.option(
    "--cache-dir", metavar="DIR", default=PLAIN["cache_dir"], help="Result cache folder (default: the platform's user cache folder)."
)
@click.option("--fix", is_flag=True, help="Apply every safe fix, re-check, report what remains.")
@click.option(
    "--diff",
    is_flag=True,
    help="Print what --fix would write as a unified diff (stdout) and what would remain (stderr); write nothing.",
)
@click.option(
    "--unsafe-fixes",
    is_flag=True,
    help="With --fix or --diff, apply the unsafe fixes (did-you-mean guesses) too; review the result.",
)
@path_filter_options("check")
@click.option(
    "--stdin-filename", metavar="PATH", default=PLAIN["stdin_filename"], help="Path to report for the source read from stdin ('-')."
)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when errors are found (2 still wins).")
@click.option("--warnings-as-errors", is_flag=True, help="Report every warning as an error.")
@click.option(
    "--max-diagnostics",
    "max_diagnostics",
    type=click.IntRange(min=0),
    default=PLAIN["max_diagnostics"],
    show_default=True,
    metavar="N",
    help="Report at most N diagnostics per file, then one LP1013 summary (0: no limit).",
)
@color_option
@click.argument("paths", nargs=-1, required=True)
def check(**params: Any) -> None:
    """Check plans (files, directories, or - for stdin) and report every problem."""
    run(**params)  # the parameters are run()'s keywords, one per option


def register(cli: click.Group) -> None:
    cli.add_command(check)
