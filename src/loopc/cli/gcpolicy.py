"""The ``loopc`` process's garbage-collector policy (:func:`gc_policy`),
kept apart so that :mod:`loopc.cli` and :mod:`loopc.cli.main` both import
it without importing each other."""

from __future__ import annotations


def gc_policy() -> None:
    """The ``loopc`` process's garbage-collector policy, set by :func:`main`
    only (the library never touches GC state;
    docs/api.md#memory-and-the-garbage-collector).  loopc's results hold no
    reference cycles, so a collection during a check finds nothing: what is
    alive at start is frozen out of every scan and generation 0 is collected
    every 10,000 net allocations instead of 700 (the imports that follow,
    click's and the passes', then trigger a few collections instead of
    dozens).  Forked ``-j`` workers inherit it; the language server adds its
    own idle-time collections (``loopc.lsp.server``)."""
    import gc

    gc.freeze()
    gc.set_threshold(10_000, 20, 20)
