"""Reading the command line's input files (docs/language.md#command-line-output): every
command reads through :func:`read_input`, so every path has a
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


def write_output(path: str, payload: bytes) -> None:
    """Write ``payload`` to the file ``path`` (``-o``); exit 2 with one line,
    ``loopc: <escaped name>: cannot write: <reason>``, when it cannot be
    written.  Never blocks on a FIFO without a reader (the open is
    non-blocking: such a FIFO is refused); a FIFO with a reader, a device
    such as ``/dev/null`` and a regular file are written."""
    import errno
    import fcntl
    import os

    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            unreadable(path, "cannot write: is a FIFO (named pipe) with no reader")
        unreadable(path, f"cannot write: {reason_of(exc)}")
    try:
        fl = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, fl & ~getattr(os, "O_NONBLOCK", 0))  # then write normally
        view = memoryview(payload)
        while view:
            n = os.write(fd, view)
            view = view[n:]
    except OSError as exc:
        unreadable(path, f"cannot write: {reason_of(exc)}")
    finally:
        os.close(fd)
