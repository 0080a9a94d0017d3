"""loopc.cli — the ``loopc`` command line (:mod:`loopc.cli.main`).

:func:`main` is the console-script entry point: it sets the process's
garbage-collector policy (:func:`gc_policy`) before click and the command
modules are imported, so that their imports already run under it.
"""

from __future__ import annotations

from loopc.cli.gcpolicy import gc_policy

__all__ = ["gc_policy", "main", "plain_check_paths"]


def main() -> None:
    """Console-script entry point (``loopc``, ``python -m loopc``): the GC
    policy, then :func:`loopc.cli.main.main` — or, for the plain form
    ``loopc check PATH...`` (:func:`plain_check_paths`), the check itself
    without importing click (docs/ci.md#start-up)."""
    gc_policy()
    import sys

    paths = plain_check_paths(sys.argv[1:])
    if paths is not None:
        from loopc.cli.check import PLAIN, run
        from loopc.cli.iofail import run_plain

        run_plain(lambda: run(paths=paths, **PLAIN))
    from loopc.cli.main import main as _main

    _main()


def plain_check_paths(args: list[str]) -> tuple[str, ...] | None:
    """The paths of ``args`` when they are ``check`` followed by one or more
    paths and nothing else — no option, no ``-`` (stdin), no ``--`` — and
    shell completion is not asked for; else ``None`` (click parses the
    command line).  Every option of ``loopc check`` then has its default
    (:data:`loopc.cli.check.PLAIN`), so the result is what click would run."""
    import os

    # "_LOOPC_COMPLETE": loopc.cli.completion.COMPLETE_VAR (that module imports click)
    if len(args) < 2 or args[0] != "check" or "_LOOPC_COMPLETE" in os.environ:
        return None
    if any(not a or a.startswith("-") for a in args[1:]):
        return None
    return tuple(args[1:])
