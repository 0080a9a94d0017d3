"""``--format gitlab``: GitLab Code Quality report (a JSON array of issues:
``description``, ``check_name`` (the code), ``fingerprint`` (as SARIF's:
code + node/edge id + pointer, plus the path), ``severity`` (``major`` for
errors, ``minor`` for warnings, ``info``), ``location.path`` and
``location.lines.begin``/``end``).  A path that could not be read is a
``blocker`` issue with ``check_name`` ``loopc.unreadable``.
"""

from __future__ import annotations

import hashlib
from typing import Any, Sequence

from loopc.cli.formats import FileReport, Format
from loopc.cli.formats._common import fingerprint
from loopc.diagnostics import Severity

_SEVERITY = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.INFO: "info"}


def _path(p: str) -> str:
    return p[2:] if p.startswith("./") else p


def render(reports: Sequence[FileReport]) -> str:
    """The JSON array (one trailing newline)."""
    issues: list[dict[str, Any]] = []
    for r in reports:
        path = _path(r.path)
        if r.error is not None:
            issues.append(
                {
                    "description": f"{path}: {r.error}",
                    "check_name": "loopc.unreadable",
                    "fingerprint": hashlib.sha256(f"unreadable\0{path}".encode("utf-8", "surrogateescape")).hexdigest(),
                    "severity": "blocker",
                    "location": {"path": path, "lines": {"begin": 1}},
                }
            )
            continue
        for d in r.diagnostics:
            begin = d.span.line if d.span is not None else 1
            end = d.span.end_line if d.span is not None else 1
            fp = hashlib.sha256(f"{path}\0{fingerprint(d)}".encode("utf-8", "surrogateescape")).hexdigest()
            issues.append(
                {
                    "description": f"{d.code} {d.message}",
                    "check_name": d.code,
                    "fingerprint": fp,
                    "severity": _SEVERITY.get(d.severity, "minor"),
                    "location": {"path": path, "lines": {"begin": begin, "end": end}},
                }
            )
    from loopc.cli.formats.json import dumps

    return dumps(issues, indent=2) + "\n"  # valid UTF-8 (pathBytes), no `##[` as written


FORMAT = Format(name="gitlab", help="GitLab Code Quality report (JSON)", render=render)
