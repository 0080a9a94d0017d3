"""The diagnostic model every consumer builds on (docs/api.md "Diagnostic"):
offsets beside line/column, explicit "no position", the file path, fix
applicability, documentation URLs, and the output-format registry."""
from __future__ import annotations

import json
import re

import pytest

import loopc
from loopc import codes
from loopc.cli import formats
from loopc.codes.schema import OK, SEND_OK
from loopc.diagnostics import Applicability, Diagnostic, Severity, Span
from loopc.lineindex import LineIndex

from conftest import ROOT
FIXTURES = sorted((ROOT / "tests" / "fixtures").rglob("*.yaml"))


def _all_spans(d: Diagnostic) -> list[Span | None]:
    spans = [d.span] + [r.span for r in d.related]
    if d.fix is not None:
        spans += [e.span for e in d.fix.edits]
    return spans


@pytest.mark.slow
def test_every_fixture_span_has_consistent_offsets() -> None:
    """Over every rule fixture: each span's ``start``/``end`` are code-point
    offsets that the line index maps back to the span's line and column."""
    seen = 0
    for path in FIXTURES:
        res = loopc.check_source(path.read_bytes(), path=str(path))
        if res.document is None:
            continue
        index = LineIndex(res.document.text)
        for d in res.diagnostics:
            assert d.path == str(path)
            for s in _all_spans(d):
                if s is None:
                    continue
                seen += 1
                assert s.start is not None and s.end is not None and 0 <= s.start <= s.end
                assert s.start <= len(res.document.text) + 1
                assert index.position(s.start) == (s.line - 1, s.column - 1), (path, d.code, s)
    assert seen > 200


def test_node_span_offsets_slice_the_node_text() -> None:
    src = OK.replace("type: end", "type: ennd")
    (d,) = [d for d in loopc.check_source(src).diagnostics if d.code == "LP2031"]
    assert src[d.span.start:d.span.end] == "ennd"


def test_offsets_count_code_points_after_wide_and_astral_characters() -> None:
    src = OK.replace("input: {}", "# 日本語 😀 e\u0301\ninput: {}").replace("type: end", "type: ennd")
    (d,) = [d for d in loopc.check_source(src).diagnostics if d.code == "LP2031"]
    assert src[d.span.start:d.span.end] == "ennd"


def test_no_position_is_none_not_a_fake_span() -> None:
    res = loopc.check_source("# nothing here yet\n", path="empty.yaml")
    (d,) = res.diagnostics
    assert d.code == "LP1003" and d.span is None and d.path == "empty.yaml"
    j = d.to_json()
    assert (j["line"], j["column"], j["endLine"], j["endColumn"]) == (None, None, None, None)
    text = formats.get("text").render([formats.FileReport("empty.yaml", res.diagnostics, "# x\n")])
    assert text == "empty.yaml: error[LP1003] the document is empty; a plan starts with the header lines\n"


def test_oversized_source_has_no_position() -> None:
    res = loopc.check_source(b"#" * (1024 * 1024 + 1))
    (d,) = res.diagnostics
    assert d.code == "LP1010" and d.span is None and d.path is None


def test_positionless_findings_sort_first() -> None:
    a = Diagnostic("LP1003", "x", Severity.ERROR, "m", None)
    b = Diagnostic("LP1001", "x", Severity.ERROR, "m", Span.point(1, 1))
    assert sorted([b, a], key=Diagnostic.sort_key) == [a, b]


def test_fix_applicability_per_fix_kind() -> None:
    # a canonical respelling of the same meaning: safe to apply unattended
    res = loopc.check_source(SEND_OK.replace("to: {node: done}", "to: done"))
    (d,) = [d for d in res.diagnostics if d.code == "LP2011"]
    assert d.fix is not None and d.fix.applicability is Applicability.SAFE and d.fix.is_safe
    assert d.fix.to_json()["applicability"] == "safe"
    # a did-you-mean guess: offered, never applied unattended
    res = loopc.check_source(OK.replace("type: end", "type: ennd"))
    (d,) = [d for d in res.diagnostics if d.code == "LP2031"]
    assert d.fix is not None and d.fix.applicability is Applicability.UNSAFE
    assert d.fix.to_json()["applicability"] == "unsafe"


def test_compile_diagnostics_are_located_too() -> None:
    res = loopc.compile_source(OK.replace("type: end", "type: ennd"), path="p.yaml")
    assert res.diagnostics and all(d.path == "p.yaml" and d.span.start is not None for d in res.diagnostics)


def test_documentation_url_from_one_base() -> None:
    base = codes.docs_base_url()
    assert base.startswith("https://") and not base.endswith("/")
    assert codes.docs_url("LP2031") == f"{base}/diagnostics.md#lp2031"
    assert codes.get("LP2031").url == codes.docs_url("LP2031")
    d = loopc.check_source(OK.replace("type: end", "type: ennd")).diagnostics[0]
    assert d.url == codes.docs_url(d.code) and d.to_json()["url"] == d.url


def test_documentation_base_is_the_pyproject_url() -> None:
    """The installed metadata carries [project.urls] Documentation, and the
    fallback constant equals it."""
    tomllib = pytest.importorskip("tomllib")

    with open(ROOT / "pyproject.toml", "rb") as fh:
        want = tomllib.load(fh)["project"]["urls"]["Documentation"].rstrip("/")
    assert codes.docs_base_url() == want
    assert codes.DOCS_URL_FALLBACK.rstrip("/") == want


def test_every_code_has_its_anchor_in_the_docs_page() -> None:
    page = (ROOT / "docs" / "diagnostics.md").read_text()
    for c in codes.all_codes():
        assert f'<a id="{c.code.lower()}"></a>' in page


def test_format_registry_discovers_modules() -> None:
    names = formats.names()
    assert names[0] == "text" and "json" in names
    for n in names:
        f = formats.get(n)
        assert f.name == n and f.help and callable(f.render)
    with pytest.raises(KeyError):
        formats.get("nope")


def test_every_format_is_documented() -> None:
    """docs/ci.md#output-formats names each format (``loopc check --help``
    points there): ``text`` in its lead, every other one with a row."""
    page = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    section = page[page.index("## Output formats") :]
    section = section[: section.index("\n## ", 1)]
    rows = set(re.findall(r"^\| `([a-z_]+)` \|", section, re.M))
    assert "`text`" in section.split("\n\n")[1]
    assert set(formats.names()) - {"text"} - rows == set(), "document the format in docs/ci.md#output-formats"


def test_every_format_renders_positionless_and_textless_reports() -> None:
    """A renderer never raises on ``span=None`` or ``text=None``."""
    res = loopc.check_source(OK.replace("type: end", "type: ennd"), path="a.yaml")
    empty = loopc.check_source("", path="b.yaml")
    reports = [formats.FileReport("a.yaml", res.diagnostics, None),
               formats.FileReport("b.yaml", empty.diagnostics, None),
               formats.FileReport("c.yaml", (), "x")]
    for n in formats.names():
        out = formats.get(n).render(reports)
        assert isinstance(out, str)


def test_json_format_is_the_contract() -> None:
    res = loopc.check_source(OK.replace("type: end", "type: ennd"), path="a.yaml")
    doc = json.loads(formats.get("json").render([formats.FileReport("a.yaml", res.diagnostics)]))
    assert doc["summary"] == {"files": 1, "errors": len(res.errors), "warnings": len(res.warnings)}
    # to_json() plus the rule's URL (to_json() itself is embedded by plans and
    # stays as it was)
    assert doc["files"][0]["diagnostics"] == [{**d.to_json(), "reference": d.reference_url}
                                              for d in res.diagnostics]


def test_documentation_base_override(monkeypatch: pytest.MonkeyPatch) -> None:
    """``LOOPC_DOCS_URL`` replaces the base (trailing slash dropped); unset,
    the pyproject base is back."""
    default = codes.docs_base_url()
    monkeypatch.setenv(codes.DOCS_URL_ENV, "https://docs.example.test/loopc/")
    codes.docs_base_url.cache_clear()
    try:
        assert codes.docs_url("LP1001") == "https://docs.example.test/loopc/diagnostics.md#lp1001"
        monkeypatch.delenv(codes.DOCS_URL_ENV)
        codes.docs_base_url.cache_clear()
        assert codes.docs_base_url() == default
    finally:
        codes.docs_base_url.cache_clear()
