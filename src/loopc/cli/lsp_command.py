"""``loopc lsp`` — run the language server over stdio (docs/editors.md)."""
from __future__ import annotations

import click


@click.command("lsp")
@click.option("--stdio", is_flag=True, default=True, hidden=True,
              help="Talk the protocol over stdin/stdout (the only transport; accepted for clients that pass it).")
@click.option("--log-file", "log_file", type=click.Path(dir_okay=False), default=None,
              help="Also write the server's log (loopc's and pygls's, with timestamps and tracebacks) to PATH.")
@click.option("--verbose", is_flag=True, default=False,
              help="Log at debug level (every protocol message); to standard error without --log-file.")
def lsp_command(stdio: bool, log_file: str | None, verbose: bool) -> None:
    """Run the language server over stdio (for editors; see docs/editors.md).

    Quiet by default: the log goes to the editor (window/logMessage)."""
    from loopc.lsp.server import serve

    serve(log_file=log_file, verbose=verbose)


def register(cli: click.Group) -> None:
    cli.add_command(lsp_command)
