"""``--format junit``: JUnit XML for CI test reports, one test case per
file (``classname`` ``loopc.check``, ``name`` the path).  A file with errors
has one ``<failure>`` listing them (``path:line:col: severity[code]
message`` lines); warnings go to ``<system-out>``; a path that could not be
read is an ``<error>``.  Names and messages are escaped
(:func:`loopc.cli.textsafe.escape_text`): a text node holds one line per
diagnostic, and no line of the document can start with ``::`` or hold
``##[`` (written ``#&#35;[``: the same XML text), whatever a CI runner
printing it makes of them.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Sequence

from loopc.cli.formats import FileReport, Format
from loopc.cli.textsafe import escape_text
from loopc.diagnostics import Diagnostic, Severity


def _line(path: str, d: Diagnostic) -> str:
    path = escape_text(path)  # one line per diagnostic, whatever the file name holds
    where = f"{path}:{d.span.line}:{d.span.column}" if d.span is not None else path
    return f"{where}: {d.severity.value}[{d.code}] {escape_text(d.message)}"


def _clean(s: str) -> str:
    """XML 1.0 cannot hold most control characters: replace them."""
    return "".join(
        ch
        if ch in "\t\n\r" or ord(ch) >= 0x20 and not 0xD800 <= ord(ch) <= 0xDFFF and ch not in "\ufffe\uffff"
        else "\ufffd"
        for ch in s
    )


def render(reports: Sequence[FileReport]) -> str:
    """The XML document (one trailing newline)."""
    failures = sum(1 for r in reports if r.error is None and any(d.is_error for d in r.diagnostics))
    errors = sum(1 for r in reports if r.error is not None)
    suites = ET.Element("testsuites", name="loopc", tests=str(len(reports)), failures=str(failures), errors=str(errors))
    suite = ET.SubElement(
        suites, "testsuite", name="loopc check", tests=str(len(reports)), failures=str(failures), errors=str(errors)
    )
    for r in reports:
        case = ET.SubElement(suite, "testcase", classname="loopc.check", name=_clean(r.path))
        if r.error is not None:
            ET.SubElement(case, "error", message=_clean(r.error), type="unreadable").text = _clean(r.error)
            continue
        errs = [d for d in r.diagnostics if d.severity is Severity.ERROR]
        rest = [d for d in r.diagnostics if d.severity is not Severity.ERROR]
        if errs:
            f = ET.SubElement(
                case, "failure", message=_clean(f"{len(errs)} error(s): {errs[0].message}"), type=errs[0].code
            )
            f.text = _clean("\n".join(_line(r.path, d) for d in errs))
        if rest:
            ET.SubElement(case, "system-out").text = _clean("\n".join(_line(r.path, d) for d in rest))
    from loopc.cli.textsafe import xml_text

    return '<?xml version="1.0" encoding="UTF-8"?>\n' + xml_text(ET.tostring(suites, encoding="unicode")) + "\n"


FORMAT = Format(name="junit", help="JUnit XML, one test case per file", render=render)
