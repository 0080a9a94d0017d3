"""Output formats of ``loopc check --format NAME``: one module per format.

Every format renders the same input — one :class:`FileReport` (path,
diagnostics, decoded source text) per checked file, in the order the files
were checked — and nothing else; the command decides exit codes.

Adding a format (interface for new modules such as SARIF, GitHub
annotations, JUnit or GitLab Code Quality):

1. create ``loopc/cli/formats/<name>.py`` (the module name is the format's
   name; a trailing underscore is dropped, so ``json_.py`` would be
   ``json``);
2. define ``FORMAT = Format(name="<name>", help="one line for --help",
   render=render)`` where ``render(reports: Sequence[FileReport]) -> str``
   returns the complete standard-output document (``""`` prints nothing;
   a non-empty document should end with a newline), and optionally
   ``render_stderr`` for human notes on standard error (the text format's
   summary line; it gets reports holding counts only) and ``write(reports,
   out)``, a streaming form of ``render`` (same bytes, one file at a time;
   with ``color=True`` in the ``Format``, ``write`` also takes
   ``color=True`` for ``--color``);
3. nothing else: :func:`names` discovers modules in this package without
   importing them, :func:`get` imports the chosen one.

Renderers are pure (no I/O, no exit) and never raise on a diagnostic without
a position (``span is None``) or a file without source text (``text is
None``).  Diagnostic fields to build on: ``code``, ``name``, ``severity``,
``message``, ``span`` (1-based line/column, code-point columns, end
exclusive, ``start``/``end`` code-point offsets), ``path``, ``pointer``,
``node``, ``edge``, ``related``, ``fix`` (with ``applicability``) and
``url`` (the code's documentation page) — see docs/api.md#diagnostic.
"""
from __future__ import annotations

import importlib
import os
from typing import IO, Callable, Iterable, Sequence

from loopc.value import Value
from loopc.diagnostics import Diagnostic, Severity

DEFAULT = "text"


class FileReport(Value):
    """One checked file: its ``path`` as given on the command line, its
    diagnostics (sorted, each with ``path``) and its decoded source ``text``
    (``None`` when it could not be decoded).  ``error`` is set (a message,
    no diagnostics) when the path could not be read or does not exist: every
    machine format shows it as a file entry with an error.  ``suppressed`` counts the
    diagnostics left out by the per-file limit (the last diagnostic is then
    the LP1013 summary); ``errors``/``warnings`` are the file's totals, those
    left out included (``None``: count ``diagnostics``)."""

    path: str
    diagnostics: tuple[Diagnostic, ...]
    text: str | None = None
    error: str | None = None
    suppressed: int = 0
    errors: int | None = None
    warnings: int | None = None


Renderer = Callable[[Sequence[FileReport]], str]
Writer = Callable[[Iterable[FileReport], IO[str]], None]


class Format(Value):
    """An output format: ``render`` gives standard output, ``render_stderr``
    (optional) human notes for standard error.  ``write`` (optional) streams
    the same bytes as ``render``: it consumes the reports one at a time as
    files are checked and writes to the stream as it goes, so memory stays
    bounded by one file (the command prefers it when present)."""

    name: str
    help: str
    render: Renderer
    render_stderr: Renderer | None = None
    write: Writer | None = None
    #: ``write`` takes ``color=True`` (``--color``: loopc.cli.color); only
    #: formats for people
    color: bool = False


def names() -> list[str]:
    """Format names, the default first, then alphabetical (no imports)."""
    found = set()
    for folder in __path__:  # a directory listing: pkgutil.iter_modules imports inspect (start-up, issue 26)
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for entry in entries:
            if entry.startswith("_"):
                continue
            if entry.endswith(".py"):
                found.add(entry[:-3].rstrip("_"))
            elif os.path.isfile(os.path.join(folder, entry, "__init__.py")):
                found.add(entry.rstrip("_"))
    return sorted(found, key=lambda n: (n != DEFAULT, n))


def get(name: str) -> Format:
    """The :class:`Format` called ``name``; ``KeyError`` if there is none."""
    if name not in names():
        raise KeyError(name)
    for mod_name in (name, name + "_"):
        try:
            mod = importlib.import_module(f"{__name__}.{mod_name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{mod_name}":
                raise
            continue
        fmt = getattr(mod, "FORMAT", None)
        if isinstance(fmt, Format):
            return fmt
    raise KeyError(name)


def summary(reports: Iterable[FileReport]) -> dict[str, int]:
    """``{"files", "errors", "warnings"}`` counts over ``reports`` (files that
    could not be read are not counted as checked)."""
    n = errors = warnings = 0
    for r in reports:
        n += r.error is None
        errors += file_errors(r)
        warnings += file_warnings(r)
    return {"files": n, "errors": errors, "warnings": warnings}


def file_errors(r: FileReport) -> int:
    """Errors of one file, those left out by the diagnostic limit included."""
    if r.errors is not None:
        return r.errors
    return sum(1 for d in r.diagnostics if d.severity is Severity.ERROR)


def file_warnings(r: FileReport) -> int:
    """Warnings of one file, those left out by the diagnostic limit included."""
    if r.warnings is not None:
        return r.warnings
    return sum(1 for d in r.diagnostics if d.severity is Severity.WARNING)
