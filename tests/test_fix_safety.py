"""Every fix marked safe is proven safe (issue 22, docs/api.md#fixes-and-their-safety).

The rule (:mod:`loopc.pipeline.fixsafety`): applied alone, a safe fix leaves
no error the text did not have — both checked with follow-on suppression
off — and, where the text compiled, the same semantic digest.  The corpus:
every fixture, example and golden source as it is, and one-defect copies of
every example and golden source made by the generators of tests/defects.py
(shared with tests/test_one_defect.py), bounded deterministically: at most
:data:`PER_GENERATOR` copies per generator and plan, spread evenly over all
it makes.  Every fix marked safe that a check of one of them offers is
proven; one that is not fails the test with the text, the fix and the new
errors."""

from __future__ import annotations

import pathlib
from collections import Counter
from typing import Iterator

import pytest
from conftest import ROOT

import loopc
from defects import GENERATORS
from loopc.diagnostics import Severity
from loopc.lint.fixes import is_safe
from loopc.pipeline.check import check_unsuppressed
from loopc.pipeline.fixsafety import error_identities, prove_fix

#: ~35 s of CPU (a minute on a loaded 2-core machine): in the full run, not
#: the fast tier (`pytest -m "not slow"`), which keeps the pinned cases of
#: tests/test_safe_fixes.py
pytestmark = pytest.mark.slow

BASES = sorted((ROOT / "examples").glob("*.yaml")) + sorted((ROOT / "golden").glob("*/*/source.yaml"))
FIXTURES = sorted(p for p in (ROOT / "tests" / "fixtures").rglob("*") if p.suffix in (".yaml", ".yml"))
#: copies per generator and plan, at most (evenly spread over all it makes)
PER_GENERATOR = 6
#: the line-shifting generator: many copies per plan, and the one that finds
#: re-indentation fixes picking the wrong column
PER_LINE_SHIFTS = 36

#: Every code whose diagnostics carry a fix that may be marked safe: the
#: corpus must exercise each (a new safe fix needs a defect class here).
SAFE_FIX_CODES = {"LP1001", "LP2004", "LP2011", "LP2012", "LP2013", "LP2024", "LP2028", "LP3203", "LP3303",
                  "LP4311"}


def _spread(items: list[tuple[str, str]], n: int) -> list[tuple[str, str]]:
    if len(items) <= n:
        return items
    return [items[i * len(items) // n] for i in range(n)]


def copies(text: str) -> Iterator[tuple[str, str]]:
    """``(generator:label, bad_text)`` of one plan, bounded."""
    for name, gen in GENERATORS.items():
        made = [(f"{name}:{label}", bad) for label, bad in gen(text) if bad != text]
        yield from _spread(made, PER_LINE_SHIFTS if name == "line_shifted" else PER_GENERATOR)


def _prove_all(text: str, where: str, seen: Counter[str]) -> list[str]:
    """Prove every safe fix ``check_source(text)`` offers; the failures."""
    diags = loopc.check_source(text).diagnostics
    safe = [d for d in diags if is_safe(d)]
    if not safe:
        return []
    before = error_identities(check_unsuppressed(text).diagnostics)
    digest = loopc.compile_source(text).digest if not any(d.severity is Severity.ERROR for d in diags) else None
    bad = []
    for d in safe:
        seen[d.code] += 1
        v = prove_fix(text, d, before=before, digest_before=digest)
        if not v.safe:
            bad.append(f"{where}: {d.code} {d.fix.message!r} at {d.span}: {v.explain()}")  # type: ignore[union-attr]
    return bad


SEEN: Counter[str] = Counter()
#: which of the proofs ran (the coverage test judges only a complete run)
RAN: set[str] = set()


@pytest.mark.parametrize("path", BASES, ids=[str(p.relative_to(ROOT)) for p in BASES])
@pytest.mark.slow
def test_every_safe_fix_on_one_defect_copies_is_proven(path: pathlib.Path) -> None:
    text = path.read_text(encoding="utf-8")
    failures = _prove_all(text, str(path.relative_to(ROOT)), SEEN)
    for label, bad in copies(text):
        failures += _prove_all(bad, f"{path.relative_to(ROOT)} [{label}]", SEEN)
    RAN.add(str(path))
    assert not failures, "\n".join(failures[:10])


@pytest.mark.slow
def test_every_safe_fix_on_the_fixtures_is_proven() -> None:
    failures: list[str] = []
    for p in FIXTURES:
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # a fixture of undecodable bytes has no fix
        failures += _prove_all(text, str(p.relative_to(ROOT)), SEEN)
    RAN.add("fixtures")
    assert not failures, "\n".join(failures[:10])


@pytest.mark.slow
def test_the_corpus_exercises_every_safe_fix() -> None:
    """Runs after the proofs above (file order): each code that can carry a
    safe fix was proven at least once, and the corpus is not trivially small."""
    if RAN != {str(p) for p in BASES} | {"fixtures"}:
        pytest.skip("judged only after every proof above ran (and passed)")
    assert SAFE_FIX_CODES <= set(SEEN), sorted(SAFE_FIX_CODES - set(SEEN))
    assert sum(SEEN.values()) >= 1000, SEEN
