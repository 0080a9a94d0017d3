"""Helpers shared by the machine formats (not a format: the leading
underscore keeps it out of :func:`loopc.cli.formats.names`)."""

from __future__ import annotations

import hashlib
import os
from urllib.parse import quote

from loopc.diagnostics import Diagnostic


def fingerprint(d: Diagnostic) -> str:
    """Stable identity of a finding that survives line moves: SHA-256 hex of
    code, node id, edge id and JSON pointer (the message too when the
    finding has none of these, e.g. a positionless LP1003)."""
    parts = [d.code, d.node or "", d.edge or "", d.pointer or ""]
    if not (d.node or d.edge or d.pointer):
        parts.append(d.message)
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()


def uri(path: str) -> str:
    """A SARIF/GitLab file reference: relative paths with ``/`` and percent
    escapes; absolute paths as ``file://`` URIs."""
    p = path.replace(os.sep, "/")
    if p.startswith("./"):
        p = p[2:]
    q = quote(p, safe="/", errors="surrogateescape")
    return "file://" + q if p.startswith("/") else q
