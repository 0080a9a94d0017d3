"""``--format github``: GitHub Actions workflow commands, one annotation
per diagnostic: ``::error file=…,line=…,col=…,endLine=…,endColumn=…,title=LP…::message``
(``warning`` for warnings, ``notice`` for infos).  A path that could not be
read is an ``::error file=…,title=loopc::`` annotation.  Values are escaped
as the runner expects (``%``, CR, LF; also ``:`` and ``,`` in properties);
other control characters, bidi controls and undecodable file-name bytes are
shown as ``\\xNN``/``\\uNNNN`` (:func:`loopc.cli.textsafe.escape_text`), so
the output is valid UTF-8 and inert in a log viewer.
"""

from __future__ import annotations

from typing import Sequence

from loopc.cli.formats import FileReport, Format
from loopc.cli.textsafe import escape_text
from loopc.diagnostics import Severity

_KIND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _data(s: str) -> str:
    # %, CR and LF as the runner expects; then every other control character,
    # bidi control and undecodable byte made visible and inert
    return escape_text(s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _prop(s: str) -> str:
    return _data(s).replace(":", "%3A").replace(",", "%2C")


def render(reports: Sequence[FileReport]) -> str:
    """One line per annotation."""
    out = []
    for r in reports:
        path = r.path[2:] if r.path.startswith("./") else r.path
        if r.error is not None:
            out.append(f"::error file={_prop(path)},title=loopc::{_data(r.error)}")
            continue
        for d in r.diagnostics:
            props = [f"file={_prop(path)}"]
            s = d.span
            if s is not None:
                props += [f"line={s.line}", f"col={s.column}", f"endLine={s.end_line}", f"endColumn={s.end_column}"]
            props.append(f"title={_prop(d.code + ' ' + d.name)}")
            out.append(f"::{_KIND.get(d.severity, 'warning')} {','.join(props)}::{_data(d.message)}")
    return "".join(line + "\n" for line in out)


FORMAT = Format(name="github", help="GitHub Actions annotations (workflow commands)", render=render)
