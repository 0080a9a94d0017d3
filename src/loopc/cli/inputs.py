"""Reading the command line's input files (docs/language.md "Command-line
output"): every command reads through :func:`read_input`, so every path has a
byte budget, never blocks on a FIFO or device, and an unreadable path is
reported the same way — ``loopc: <escaped name>: <precise reason>`` on
standard error and exit status 2.
"""
from __future__ import annotations

import sys
from typing import NoReturn

import click

#: Exit status for an unreadable input (as for a usage error).
EXIT_UNREADABLE = 2


def unreadable(path: str, reason: str) -> NoReturn:
    """Report ``path`` as unreadable (``reason``) and exit 2."""
    from loopc.cli.textsafe import escape_text

    click.echo(f"loopc: {escape_text(path)}: {reason}", err=True)
    sys.exit(EXIT_UNREADABLE)


def reason_of(exc: OSError) -> str:
    """The short reason of a read failure (:class:`loopc.boundedio.ReadError`
    says precisely what the path is)."""
    return getattr(exc, "reason", None) or (exc.strerror or str(exc)).lower()


def read_input(path: str, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of ``path`` (``-``: standard input), only
    from a regular file (:func:`loopc.boundedio.read_bounded`); exit 2 with
    the precise reason when ``path`` cannot be read.  A result longer than
    ``limit`` is over budget: the caller reports it."""
    from loopc.boundedio import read_bounded, read_stream_bounded

    try:
        if path == "-":
            return read_stream_bounded(sys.stdin.buffer, limit)
        return read_bounded(path, limit)
    except OSError as exc:
        unreadable(path, reason_of(exc))
