"""``loopc`` command line (click).

``loopc check`` lives in :mod:`loopc.cli.check` (formats:
:mod:`loopc.cli.formats`; exit 0 when no errors, 1 when any error, 2 for
usage errors or unreadable paths — 2 wins; 2 also when standard output
cannot be written: :mod:`loopc.cli.iofail`), ``loopc config`` in
:mod:`loopc.cli.config`.  IR commands (``compile``, ``digest``, ``verify``) are registered
from :mod:`loopc.cli.ir_commands`.  Command modules are imported only when
one of their commands is invoked, completed or listed (``_Group``,
:func:`register_lazy`) and heavy imports happen inside commands, so that
start-up stays fast (``loopc check FILE`` imports neither the interpreter
nor the language server).
"""
from __future__ import annotations

import importlib
import sys
from typing import Sequence

import click

from loopc import __version__
from loopc.cli.gcpolicy import gc_policy


class _Group(click.Group):
    """A group whose command list shows each command's whole first paragraph
    (wrapped, never cut at "e.g." or at a fixed width with "..."), and whose
    commands are imported on first use (:data:`_LAZY`)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | set(_LAZY))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in _LAZY:
            _load(self, _LAZY[cmd_name])
        return self.commands.get(cmd_name)

    def load_all(self) -> None:
        """Import every command module (for code that reads :attr:`commands`)."""
        for module in dict.fromkeys(_LAZY.values()):
            _load(self, module)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is None or cmd.hidden:
                continue
            rows.append((name, summary(cmd)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def summary(cmd: click.Command) -> str:
    """The one-paragraph summary of ``cmd`` shown by ``loopc --help``: its
    ``short_help`` or the first paragraph of its help text, on one line."""
    if cmd.short_help:
        return cmd.short_help
    text = (cmd.help or "").split("\b")[0].strip()
    return " ".join(text.split("\n\n")[0].split())


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="loopc")
def cli() -> None:
    """loopc — compiler and static analyzer for loop.plan/v1 workflows."""


@cli.command()
@click.option("--list", "list_codes", is_flag=True, help="List every code with its severity and title.")
@click.argument("code", required=False)
def explain(code: str | None, list_codes: bool) -> None:
    """Explain a diagnostic code (e.g. LP2001) or its slug (e.g. state.race)."""
    from loopc import codes

    if list_codes:
        for c in codes.all_codes():
            click.echo(f"{c.code}  {c.severity.value:<7}  {c.name:<34}  {c.title}")
        return
    if code is None:
        click.echo("loopc: name a code (e.g. loopc explain LP2001) or use --list", err=True)
        sys.exit(2)
    matches = [c for c in codes.all_codes() if code.upper() == c.code or code == c.name]
    if not matches:
        from loopc.cli.textsafe import escape_text

        shown = escape_text(code if len(code) <= 80 else code[:60] + f"… ({len(code):,} characters)")
        from loopc.compiler.spelling import suggest

        known = [c.code for c in codes.all_codes()] + [c.name for c in codes.all_codes()]
        hint = suggest(code, known) if len(code) <= 80 else None
        hint_text = f"; did you mean {hint}?" if hint else " (loopc explain --list lists them)"
        click.echo(f"loopc: unknown diagnostic code {shown}{hint_text}", err=True)
        sys.exit(2)
    c = matches[0]
    click.echo(f"{c.code} {c.name} ({c.severity.value}): {c.title}\n\n{c.explanation}")
    if c.reference:
        click.echo(f"\nRule: docs/{c.reference}")
        if c.located:
            click.echo("  (for the document; a finding inside a node's configuration links to its kind's "
                       "section, such as docs/reference.md#node-join, one inside a contract to "
                       "#contracts, one inside an edge to #edges: see `reference` in `loopc check --format json`)")
    if c.example:
        click.echo(f"\nFailing example:\n{c.example}")
    if c.fixed:
        click.echo(f"\nFixed:\n{c.fixed}")


#: The command modules, imported when one of their commands is needed
#: (``loopc check FILE`` imports only :mod:`loopc.cli.check`; ``--help`` and
#: completion import them all).  Each module's ``register(group)`` adds its
#: commands; a module may register several (``plan_commands``: plan, catalog,
#: inventory).  Order is the registration order, which ``--help`` does not
#: depend on (click sorts the listing).
_LAZY: dict[str, str] = {
    "check": "loopc.cli.check_command",
    "completion": "loopc.cli.completion",
    "config": "loopc.cli.config",
    "fmt": "loopc.cli.fmt",
    "graph": "loopc.cli.graph",
    "compile": "loopc.cli.ir_commands",
    "digest": "loopc.cli.ir_commands",
    "verify": "loopc.cli.ir_commands",
    "run": "loopc.cli.run_commands",
    "conform": "loopc.cli.run_commands",
    "lsp": "loopc.cli.lsp_command",
    "plan": "loopc.cli.plan_commands",
    "catalog": "loopc.cli.plan_commands",
    "inventory": "loopc.cli.plan_commands",
    "durable": "loopc.cli.durable_commands",
}
_LOADED: set[str] = set()


def register_lazy(names: Sequence[str], module: str) -> None:
    """Declare that ``module`` (a dotted module name whose ``register(group)``
    adds commands to a click group) provides the commands ``names``; it is
    imported only when one of them is invoked, completed or listed."""
    for name in names:
        _LAZY[name] = module


def _load(group: click.Group, module: str) -> None:
    if module in _LOADED:
        return
    _LOADED.add(module)
    importlib.import_module(module).register(group)


def main() -> None:
    """Run the command line (output failures: :mod:`loopc.cli.iofail`) under
    :func:`loopc.cli.gc_policy` (already in force, from before click was
    imported, when the console script's ``loopc.cli:main`` called this)."""
    from loopc.cli.iofail import run

    gc_policy()
    run(cli)


if __name__ == "__main__":  # pragma: no cover
    main()
