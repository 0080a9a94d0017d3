"""``loopc lsp`` — run the language server over stdio (docs/editors.md)."""
from __future__ import annotations

import click


@click.command("lsp")
@click.option("--stdio", is_flag=True, default=True, hidden=True,
              help="Talk the protocol over stdin/stdout (the only transport; accepted for clients that pass it).")
def lsp_command(stdio: bool) -> None:
    """Run the language server over stdio (for editors; see docs/editors.md)."""
    from loopc.lsp.server import serve

    serve()


def register(cli: click.Group) -> None:
    cli.add_command(lsp_command)
