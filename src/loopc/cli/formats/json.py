"""``--format json``: the JSON contract of ``loopc check --format json``.

``{"files": [{"path", "diagnostics": [Diagnostic.to_json(), ...]}, ...],
"summary": {"files", "errors", "warnings"}}``, indent 2, UTF-8 kept as is.
A file that could not be read has ``"error": "<message>"`` and no diagnostics.
A file whose diagnostics were cut by the per-file limit also has
``"suppressed": N`` (the last diagnostic is then the LP1013 summary) and its
summary counts include the ones left out.  Always valid UTF-8: a file name
whose bytes are not UTF-8 shows them as U+FFFD in ``path`` and gives them
exactly, base64-encoded, in ``pathBytes``.  Streams one file at a time
(:func:`write`; same bytes as :func:`render`).  No string holds ``##[`` as
written (a CI runner's legacy command prefix): its ``#`` is written
``\\u0023``, the same JSON value (:func:`loopc.cli.textsafe.json_text`).
"""
from __future__ import annotations

import base64
import re
import io
import json
import os
from typing import IO, Any, Iterable, Sequence

from loopc.cli.formats import FileReport, Format, file_errors, file_warnings
from loopc.cli.textsafe import json_text


def path_json(path: str) -> dict[str, Any]:
    """``{"path": ...}``, plus ``"pathBytes"`` (base64 of the raw bytes)
    when the name is not valid UTF-8."""
    try:
        path.encode("utf-8")
        return {"path": path}
    except UnicodeEncodeError:
        raw = os.fsencode(path)
        return {"path": raw.decode("utf-8", "replace"),
                "pathBytes": base64.b64encode(raw).decode("ascii")}


#: Keys whose string values are file names (given a ``<key>Bytes`` beside
#: them when not valid UTF-8) in :func:`utf8_json`.
PATH_KEYS = ("path", "scenario")


def _repair(s: str) -> str:
    """``s`` with undecodable file-name bytes (``surrogateescape``) and lone
    surrogates shown as U+FFFD."""
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", s)


_SURROGATE = re.compile("[\ud800-\udfff]")


def utf8_json(doc: Any) -> Any:
    """A copy of the JSON value ``doc`` that encodes as valid UTF-8: every
    file name under a :data:`PATH_KEYS` key that is not valid UTF-8 is shown
    with U+FFFD and its raw bytes beside it, base64, as ``<key>Bytes``
    (``pathBytes``, as in :func:`path_json`); any other string with
    undecodable bytes shows them as U+FFFD.  Linear in the size of ``doc``."""
    if isinstance(doc, str):
        return _repair(doc)
    if isinstance(doc, list):
        return [utf8_json(x) for x in doc]
    if isinstance(doc, dict):
        out: dict[str, Any] = {}
        for k, v in doc.items():
            if k in PATH_KEYS and isinstance(v, str):
                shown = path_json(v)
                out[k] = shown["path"]
                if "pathBytes" in shown:
                    out[f"{k}Bytes"] = shown["pathBytes"]
            else:
                out[_repair(k) if isinstance(k, str) else k] = utf8_json(v)
        return out
    return doc


def dumps(doc: Any, **kw: Any) -> str:
    """The JSON text of ``doc`` as every ``loopc`` command prints it: valid
    UTF-8 (:func:`utf8_json`), non-ASCII kept, and no ``##[`` in a string
    (:func:`loopc.cli.textsafe.json_text`: the same value, written
    ``#\\u0023[``); ``kw`` go to :func:`json.dumps` (``indent``,
    ``sort_keys``)."""
    return json_text(json.dumps(utf8_json(doc), ensure_ascii=False, **kw))


def file_json(r: FileReport) -> dict[str, Any]:
    """One entry of ``files``."""
    entry: dict[str, Any] = {**path_json(r.path),
                             "diagnostics": [{**d.to_json(), "reference": d.reference_url} for d in r.diagnostics]}
    if r.error is not None:
        entry["error"] = r.error
    if r.suppressed:
        entry["suppressed"] = r.suppressed
    return entry


def _indent(text: str, prefix: str) -> str:
    return text.replace("\n", "\n" + prefix)  # JSON strings never hold a raw newline


def write(reports: Iterable[FileReport], out: IO[str]) -> None:
    """Stream the document: each file's entry is written as soon as it is
    checked; the bytes equal ``json.dumps(doc, indent=2, ensure_ascii=False)``
    of the whole document plus one newline."""
    n = files = errors = warnings = 0
    for r in reports:
        sep = '{\n  "files": [\n    ' if n == 0 else ",\n    "
        out.write(sep + _indent(json_text(json.dumps(file_json(r), indent=2, ensure_ascii=False)), "    "))
        n += 1
        files += r.error is None  # files that could not be read are not counted as checked
        errors += file_errors(r)
        warnings += file_warnings(r)
    summary = {"files": files, "errors": errors, "warnings": warnings}
    head = '{\n  "files": [],' if n == 0 else "\n  ],"
    out.write(head + '\n  "summary": ' + _indent(json.dumps(summary, indent=2), "  ") + "\n}\n")


def render(reports: Sequence[FileReport]) -> str:
    """The JSON document (one trailing newline)."""
    buf = io.StringIO()
    write(reports, buf)
    return buf.getvalue()


FORMAT = Format(name="json", help="one JSON document for all files", render=render, write=write)
