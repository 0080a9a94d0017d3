"""Data-driven rule tests (actionlint style): every ``tests/fixtures/**/X.yaml``
is checked and the set of ``line:col CODE`` findings (``- CODE`` for one
without a position) must equal ``X.out``
(an empty ``.out`` means the near-miss checks clean)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import loopc

FIXTURES = Path(__file__).parent / "fixtures"
CASES = sorted(FIXTURES.rglob("*.yaml")) if FIXTURES.is_dir() else []


def expected(path: Path) -> list[str]:
    out = path.with_suffix(".out")
    if not out.exists():
        return []
    return sorted(l.strip() for l in out.read_text().splitlines() if l.strip() and not l.startswith("#"))


def _at(d: "loopc.Diagnostic") -> str:
    """``line:col``, or ``-`` for a finding without a position."""
    return "-" if d.span is None else f"{d.span.line}:{d.span.column}"


@pytest.mark.parametrize("path", CASES, ids=[str(p.relative_to(FIXTURES)) for p in CASES])
def test_fixture(path: Path) -> None:
    res = loopc.check_source(path.read_bytes(), path=str(path))
    got = sorted(f"{_at(d)} {d.code}" for d in res.diagnostics)
    assert got == expected(path), "\n".join(
        f"{_at(d)} {d.code} {d.message}" for d in res.diagnostics
    )
    assert not any(d.code == "LP5999" for d in res.diagnostics)
    for d in res.diagnostics:
        for text in (d.message, *(r.message for r in d.related)):
            assert _well_formed(text), f"{d.code}: {text!r}"


# a message is one sentence in loopc's words: no dangling space, separator or
# fragment left where a clause was removed (``would stay open ; end``)
_MALFORMED = re.compile(r"^\s|\s$|  |\s[,;.:](\s|$)|[,;:]$|\(\s+\)")


def _well_formed(text: str) -> bool:
    return _MALFORMED.search(text) is None


def test_every_fixture_has_a_sidecar() -> None:
    missing = [str(p) for p in CASES if not p.with_suffix(".out").exists()]
    assert missing == []


def test_schema_fixtures_are_what_their_generator_writes(tmp_path: Path) -> None:
    """``tests/fixtures/schema/_generate.py`` writes the schema pass's
    fixtures from marked sources; the committed files are its output, so
    adding a case there and running it changes only that case's files."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_generate", FIXTURES / "schema" / "_generate.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    gen.main(str(tmp_path))
    written = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    committed = {n: (FIXTURES / "schema" / n).read_bytes() for n in written if (FIXTURES / "schema" / n).exists()}
    assert sorted(set(written) - set(committed)) == []
    assert [n for n in sorted(written) if written[n] != committed[n]] == []
