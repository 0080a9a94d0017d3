"""One analysed version of one open document (docs/editors.md).

:func:`analyse` runs the same pure :func:`loopc.check_source` as
``loopc check`` (so the same budgets bound it: 1 MiB of source, nesting 64,
100,000 YAML nodes, 512 nodes, 2,048 edges) and keeps what the features
need: the text, its :class:`~loopc.lsp.positions.EditorIndex` in the
negotiated encoding, the :class:`~loopc.CheckResult` and the protocol
diagnostics.  Documents that are not plans (see :mod:`loopc.lsp.activation`)
are not checked at all.  Never raises: a failure of the check itself becomes
an LP5999 diagnostic, as in the CLI.
"""
from __future__ import annotations

from typing import Any, Mapping

from lsprotocol import types as lsp

from loopc.ide.document import Document
from loopc.lsp.activation import is_plan_text
from loopc.lsp.convert import to_lsp
from loopc.lsp.positions import EditorIndex


class Analysis:
    """``uri``, ``version``, ``text``, ``index`` (:class:`~loopc.lsp.positions.EditorIndex`),
    ``active`` (is a plan), ``result`` (the :class:`~loopc.CheckResult`, or
    ``None`` when not active) and ``diagnostics`` (protocol diagnostics)."""

    __slots__ = ("uri", "version", "text", "index", "active", "result", "diagnostics", "config_problems", "_cache",
                 "over_budget", "config_stamp", "_doc")

    def __init__(self, uri: str, version: int | None, text: str, index: EditorIndex, active: bool,
                 result: Any, diagnostics: list[lsp.Diagnostic]) -> None:
        self.uri = uri
        self.version = version
        self.text = text
        self.index = index
        self.active = active
        self.result = result
        self.diagnostics = diagnostics
        self.config_problems: list[str] = []
        #: the project configuration's :func:`loopc.lsp.project.stamp` when
        #: checked (``()``: none applies or none was read)
        self.config_stamp: tuple[Any, ...] = ()
        self._cache: dict[str, Any] = {}
        #: the document is larger than the source budget: one LP1010
        #: diagnostic, no analysis and no features
        self.over_budget = False
        self._doc: Document | None = None

    @property
    def doc(self) -> Document:
        """The :class:`loopc.ide.Document` the editor features read (this
        text, its check result and line index)."""
        if self._doc is None:
            self._doc = Document(self.text, self.result, self.index.lines)
        return self._doc

    @property
    def plan(self) -> Any:
        return getattr(self.result, "plan", None)

    @property
    def document(self) -> Any:
        return getattr(self.result, "document", None)

    def cached(self, key: str, build: Any) -> Any:
        """Per-version memo for derived tables (outline, symbol index)."""
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]


def analyse(uri: str, text: str, version: int | None, encoding: str,
            overrides: Mapping[str, str] | None = None, *, project: bool = True,
            checker: Any = None) -> Analysis:
    """Check ``text`` when it is a plan and convert its diagnostics.  With
    ``project``, the document's project configuration applies as in
    ``loopc check`` (:mod:`loopc.lsp.project`).  ``checker``, the
    document's :class:`loopc.pipeline.incremental.IncrementalChecker`,
    re-checks an edited text incrementally (same result as
    :func:`loopc.check_source`; docs/editors.md#incremental-re-check)."""
    if not is_plan_text(text):
        return Analysis(uri, version, text, EditorIndex(text, encoding), False, None, [])
    if source_over_budget(text):
        return _over_budget(uri, version, text, encoding, overrides)
    index = EditorIndex(text, encoding)
    from loopc.pipeline import check_source

    path = _path_of(uri)
    config = None
    stamp: tuple[Any, ...] = ()
    if project:
        from loopc.lsp.project import config_for
        from loopc.lsp.project import stamp as config_stamp

        stamp = config_stamp(path)  # before reading: a change meanwhile shows as a stale stamp
        config, problems = config_for(path)
    if checker is not None:
        result = checker.check(text, path=path, config=config)
    else:
        result = check_source(text, path=path, config=config)
    diags = []
    for d in result.diagnostics:
        ld = to_lsp(d, index, uri, overrides)
        if ld is not None:
            diags.append(ld)
    a = Analysis(uri, version, text, index, True, result, diags)
    if project:
        a.config_problems = problems
        a.config_stamp = stamp
    return a


def config_current(a: Analysis) -> bool:
    """Whether the project configuration ``a`` was checked with still holds
    (its files unchanged: :func:`loopc.lsp.project.stamp`); always true for
    a document that is no plan or has no file path."""
    if not a.active or a.over_budget or not a.config_stamp:
        return True
    from loopc.lsp.project import stamp

    return stamp(_path_of(a.uri)) == a.config_stamp


def source_over_budget(text: str) -> bool:
    """Whether ``text`` is larger than the 1 MiB source budget in UTF-8
    bytes (as :func:`loopc.check_source` counts; encoded only when the
    length alone cannot tell)."""
    from loopc.pipeline import yaml_budget_bytes

    MAX_SOURCE_BYTES = yaml_budget_bytes()
    if len(text) > MAX_SOURCE_BYTES:
        return True
    if len(text) * 4 <= MAX_SOURCE_BYTES:
        return False
    return len(text.encode("utf-8", "surrogatepass")) > MAX_SOURCE_BYTES


def _over_budget(uri: str, version: int | None, text: str, encoding: str,
                 overrides: Mapping[str, str] | None) -> Analysis:
    """An over-budget document: one LP1010 diagnostic at the start, no
    check, no model (so no features), no line index over the text."""
    from loopc import codes
    from loopc.diagnostics import Diagnostic
    from loopc.pipeline import yaml_budget_bytes

    MAX_SOURCE_BYTES = yaml_budget_bytes()

    c = codes.get("LP1010")
    d = Diagnostic("LP1010", c.name, c.severity,
                   f"source exceeds the limit of {MAX_SOURCE_BYTES:,} bytes (1 MiB); not analysed", None)
    index = EditorIndex("", encoding)
    ld = to_lsp(d, index, uri, overrides)
    a = Analysis(uri, version, text, index, True, None, [ld] if ld is not None else [])
    a.over_budget = True
    return a


def _path_of(uri: str) -> str | None:
    if uri.startswith("file://"):
        from pygls.uris import to_fs_path

        try:
            return to_fs_path(uri)
        except Exception:  # noqa: BLE001 - odd URI: no path
            return None
    return None
