"""Clean output failures for every ``loopc`` command (docs/language.md#command-line-output).

A closed pipe (``loopc check . | head -1``), a full device
(``loopc compile plan.yaml > /dev/full``) or any other error writing
standard output ends the command with one short line on standard error,
``loopc: cannot write to standard output: <reason>``, and exit status 2 —
never a traceback, never Python's "Exception ignored" noise at exit.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Callable, NoReturn

#: Exit status when standard output cannot be written (as for unreadable input).
EXIT_OUTPUT_FAILED = 2


def _silence_stdout() -> None:
    """Point file descriptor 1 at /dev/null so that the interpreter's final
    flush cannot fail again."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError, AttributeError):
        pass


def output_failed(exc: OSError) -> int:
    """Report ``exc`` (an error writing standard output) on standard error
    and return :data:`EXIT_OUTPUT_FAILED`."""
    _silence_stdout()
    if sys.stderr.__class__.__name__ == "_PacifyFlushWrapper":
        sys.stderr = sys.__stderr__
    reason = exc.strerror or str(exc) or type(exc).__name__
    try:
        sys.stderr.write(f"loopc: cannot write to standard output: {reason}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    return EXIT_OUTPUT_FAILED


def run_plain(body: Callable[[], Any]) -> NoReturn:
    """Run ``body`` (a command that exits with :func:`sys.exit` or returns
    for 0) without click, with the same output-failure handling as
    :func:`run`: an error writing standard output is one line and exit 2, an
    interrupt prints ``Aborted!`` and exits 1 (as click does).  Used by the
    plain ``loopc check PATH...`` form (:func:`loopc.cli.main`)."""
    code: Any = 0
    try:
        body()
    except SystemExit as e:
        code = e.code
    except (EOFError, KeyboardInterrupt):
        sys.stderr.write("\nAborted!\n")
        code = 1
    except OSError as e:  # raised while writing output
        code = output_failed(e)
    sys.exit(_flushed(code))


def _flushed(code: Any) -> Any:
    try:
        sys.stdout.flush()
    except OSError as e:
        code = output_failed(e)
    except ValueError:  # stdout already closed
        pass
    return code


def run(group: Any, prog_name: str = "loopc") -> NoReturn:
    """Run the click ``group`` (non-standalone, so that output errors are
    ours to report) and exit with its status."""
    import click

    code: Any = 0
    try:
        rv = group.main(prog_name=prog_name, standalone_mode=False)
        code = rv if isinstance(rv, int) else 0
    except SystemExit as e:
        code = e.code
        pacify = getattr(click.utils, "_PacifyFlushWrapper", None)
        if pacify is not None and isinstance(sys.stdout, pacify):
            # click met a broken pipe (EPIPE) and exits 1 silently: say so
            import errno

            code = output_failed(BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE)))
    except click.exceptions.Abort:
        sys.stderr.write("Aborted!\n")
        code = 1
    except click.ClickException as e:
        try:
            e.show()
        except OSError:
            pass
        code = e.exit_code
    except OSError as e:  # raised while writing output
        code = output_failed(e)
    sys.exit(_flushed(code))
