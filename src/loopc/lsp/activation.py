"""Which documents the language server analyses (docs/editors.md#which-files-are-plans).

By content, not by file name: a document is a plan when one of its first
lines is an ``apiVersion:`` whose value is a loop language version
(``loop.plan/v1``, or the legacy ``loop.workflow/v1`` header that
``loopc check`` diagnoses with a dedicated code), or, without any
``apiVersion`` line, a ``kind: PlanVersion`` line.  Any other YAML file (Kubernetes
manifests, CI configuration, a ``docker-compose.yml``) gets no diagnostics
and no features.  Only the first lines are looked at: the header must come
first (later lines of a plan are never needed to decide).
"""
from __future__ import annotations

import re

#: How many leading lines may hold the header (comments, a BOM or a ``---``
#: before it are diagnosed by ``loopc check``, so they must not hide the plan).
HEAD_LINES = 8

_API = re.compile(r"""^[ \t]*["']?apiVersion["']?[ \t]*:[ \t]*["']?([^\s"'#]*)""")
_KIND = re.compile(r"""^[ \t]*["']?kind["']?[ \t]*:[ \t]*["']?PlanVersion["']?[ \t]*(?:#.*)?$""")


def is_plan_text(text: str) -> bool:
    """True when ``text`` declares itself a loop plan in its first
    :data:`HEAD_LINES` lines: an ``apiVersion`` of the loop language
    (``loop.plan/v1``, legacy ``loop.workflow/v1``, or a wrong version such as
    ``loop.plan/v2``, which ``loopc check`` diagnoses), or, with no
    ``apiVersion`` line at all, ``kind: PlanVersion``.  A foreign
    ``apiVersion`` (``apps/v1``, ``argoproj.io/v1alpha1`` with its own
    ``kind: Workflow``) means the file is not a plan.  Cheap: reads at most
    4 KiB."""
    head = text[:4096].lstrip("\ufeff")
    kind = False
    for line in head.splitlines()[:HEAD_LINES]:
        m = _API.match(line[:256])
        if m:
            return m.group(1).startswith("loop.")
        if _KIND.match(line[:256]):
            kind = True
    return kind
