"""loopc.cli — the ``loopc`` command line (:mod:`loopc.cli.main`).

:func:`main` is the console-script entry point: it sets the process's
garbage-collector policy (:func:`gc_policy`) before click and the command
modules are imported, so that their imports already run under it.
"""

from __future__ import annotations

from loopc.cli.gcpolicy import gc_policy

__all__ = ["gc_policy", "main"]


def main() -> None:
    """Console-script entry point (``loopc``, ``python -m loopc``): the GC
    policy, then :func:`loopc.cli.main.main`."""
    gc_policy()
    from loopc.cli.main import main as _main

    _main()
