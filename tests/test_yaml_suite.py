"""The YAML layer over the public yaml-test-suite (../shared/yaml-test-suite).

* no input crashes or hangs;
* where loopc accepts a valid case, its data equals ``in.json`` under the
  YAML 1.2 core schema;
* where it rejects a case, an LP1xxx diagnostic says why and where;
* the ``error`` cases that libyaml (and so loopc) accepts are a known,
  test-visible list: ``tests/data/yaml_suite_accepted_errors.txt``.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from loopc.compiler.report import Reporter
from loopc.compiler.yamlload import load

SUITE = Path(__file__).resolve().parents[2] / "shared" / "yaml-test-suite"
if not SUITE.is_dir():  # CI lays shared/ beside the clone
    SUITE = Path(__file__).resolve().parents[1].parent / "shared" / "yaml-test-suite"
KNOWN = Path(__file__).parent / "data" / "yaml_suite_accepted_errors.txt"
KNOWN_MISMATCH = Path(__file__).parent / "data" / "yaml_suite_known_mismatches.txt"


def _list(path: Path) -> list[str]:
    return sorted(l.strip() for l in path.read_text().splitlines() if l.strip() and not l.startswith("#"))


def _cases() -> list[Path]:
    if not SUITE.is_dir():
        return []
    out = []
    for d in sorted(SUITE.iterdir()):
        if (d / "in.yaml").exists():
            out.append(d)
        elif d.is_dir():
            out += [s for s in sorted(d.iterdir()) if (s / "in.yaml").exists()]
    return out


CASES = _cases()


def _id(p: Path) -> str:
    return str(p.relative_to(SUITE))


def _json_values(text: str) -> list:
    dec = json.JSONDecoder()
    vals, i = [], 0
    text = text.strip()
    while i < len(text):
        v, j = dec.raw_decode(text, i)
        vals.append(v)
        i = j
        while i < len(text) and text[i].isspace():
            i += 1
    return vals


def _norm(v):
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return repr(v)
    if isinstance(v, dict):
        return {str(k): _norm(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_norm(x) for x in v]
    return v


def _run(case: Path):
    data = (case / "in.yaml").read_bytes()
    r = Reporter()
    doc = load(data, r)
    errors = [d for d in r.diagnostics if d.code.startswith("LP1")]
    return doc, errors


@pytest.mark.skipif(not CASES, reason="yaml-test-suite not present")
def test_suite_never_crashes_and_matches_json():
    accepted_errors = []
    mismatches = []
    for case in CASES:
        doc, errors = _run(case)
        for d in errors:  # every rejection has a position (or none at all: empty)
            assert d.span is None and d.code == "LP1003" or d.span.line >= 1 and d.span.column >= 1
        if (case / "error").exists():
            if not errors:
                accepted_errors.append(_id(case))
            continue
        if errors or doc is None or doc.root is None:
            continue
        jf = case / "in.json"
        if not jf.exists():
            continue
        vals = _json_values(jf.read_text(encoding="utf-8"))
        if len(vals) != 1:
            continue
        if _norm(doc.root.to_data()) != _norm(vals[0]):
            mismatches.append(_id(case))
    assert sorted(mismatches) == _list(KNOWN_MISMATCH), f"data differs from in.json: {mismatches}"
    known = _list(KNOWN)
    assert sorted(accepted_errors) == known, (
        "the set of yaml-test-suite error cases loopc accepts changed; "
        f"now: {sorted(accepted_errors)}"
    )
