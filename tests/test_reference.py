"""The language reference ships with loopc (docs/reference.md): every
diagnostic code links to the section whose rule it enforces, and no
user-facing text cites the design documents loopc was built from."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from loopc import check_source, codes
from loopc.codes.sections import SECTIONS, section

from conftest import ROOT
REFERENCE = (ROOT / "docs" / "reference.md").read_text("utf-8")
ANCHORS = set(re.findall(r'<a id="([a-z0-9-]+)"></a>', REFERENCE))
# Design documents users do not have: "seed 004 §4.7", "the seed's", "syntax sheet §3".
CITATION = re.compile(r"\bseed\b|syntax sheet|\bsheet §", re.IGNORECASE)


def test_every_code_links_to_an_existing_reference_section() -> None:
    missing = [c.code for c in codes.all_codes() if not section(c.code)]
    assert not missing, (
        f"codes without a reference section: {missing} — add each to "
        "src/loopc/codes/sections.py (or pass section=... in its Code entry) with the anchor "
        "of the docs/reference.md section whose rule it enforces")
    broken = {c.code: section(c.code) for c in codes.all_codes() if section(c.code) not in ANCHORS}
    assert not broken, f"anchors missing from docs/reference.md: {broken}"


def test_section_table_names_only_registered_codes() -> None:
    registered = {c.code for c in codes.all_codes()}
    assert set(SECTIONS) <= registered, sorted(set(SECTIONS) - registered)


def test_reference_internal_links_resolve() -> None:
    links = set(re.findall(r"\]\(#([a-z0-9-]+)\)", REFERENCE))
    assert links <= ANCHORS, sorted(links - ANCHORS)


def _user_facing_files() -> list[Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")),
             *sorted((ROOT / "docs" / "schema").glob("*.json")),
             *sorted((ROOT / "examples").glob("*"))]
    return [p for p in files if p.is_file()]


@pytest.mark.parametrize("path", _user_facing_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_design_document_citations_in_user_facing_files(path: Path) -> None:
    hits = [f"{i}: {line.strip()}" for i, line in enumerate(path.read_text("utf-8").splitlines(), 1)
            if CITATION.search(line)]
    assert not hits, hits


def test_no_design_document_citations_in_the_code_registry() -> None:
    hits = [(c.code, f) for c in codes.all_codes()
            for f in ("title", "explanation", "example", "fixed") if CITATION.search(getattr(c, f))]
    assert not hits, hits


def test_no_design_document_citations_in_emitted_messages() -> None:
    sources = sorted((ROOT / "tests" / "fixtures").rglob("*.yaml")) + sorted((ROOT / "golden").rglob("*.yaml"))
    hits = []
    for p in sources:
        for d in check_source(p.read_bytes()).diagnostics:
            texts = [d.message] + [r.message for r in d.related]
            if any(CITATION.search(t or "") for t in texts):
                hits.append((str(p.relative_to(ROOT)), d.code, d.message))
    for c in codes.all_codes():
        if c.example and not c.example.startswith("<"):
            for d in check_source(c.example).diagnostics:
                if CITATION.search(d.message):
                    hits.append((c.code, d.code, d.message))
    assert not hits, hits[:20]


def test_explain_prints_the_rule_link() -> None:
    out = subprocess.run([sys.executable, "-m", "loopc", "explain", "LP4302"],
                         capture_output=True, text=True, check=True).stdout
    assert "Rule: docs/reference.md#parallel-scopes" in out
    assert not CITATION.search(out)


def test_a_shape_finding_links_to_the_rule_of_where_it_is() -> None:
    """LP2006/LP2007/LP2012 inside a node's configuration break that node
    kind's rule: a join without `mode` links to #node-join, not #document."""
    import loopc
    from loopc.codes.sections import LOCATED

    src = (ROOT / "tests" / "fixtures" / "schema" / "fan_out_join_mode.yaml").read_text().replace("      mode: any\n", "")
    (d,) = [x for x in loopc.check_source(src).diagnostics if x.code == "LP2006"]
    assert "'mode'" in d.message and d.section == "node-join"
    assert d.reference_url.endswith("/reference.md#node-join")
    unknown = src.replace("      fanOutId: dispatch\n", "      fanOutId: dispatch\n      mode: all\n      modee: all\n")
    (d,) = [x for x in loopc.check_source(unknown).diagnostics if x.code == "LP2007"]
    assert d.section == "node-join"
    # a contract's key, a top-level key: the contracts and document rules
    (d,) = loopc.check_source(codes.get("LP2007").example).diagnostics
    assert d.section == "contracts"
    top = src.replace("edges:", "edgez: []\nedges:", 1)
    assert {x.section for x in loopc.check_source(top).diagnostics if x.code == "LP2007"} == {"document"}
    # every other code keeps its own section
    (d,) = [x for x in loopc.check_source(codes.get("LP2061").example).diagnostics if x.code == "LP2061"]
    assert "LP2061" not in LOCATED and d.section == section("LP2061") == "node-join"
    for anchor in ("node-join", "contracts", "edges", "retry", "node-send-message", "node-fan-out"):
        assert anchor in ANCHORS


def test_a_bad_choice_or_bound_links_to_the_node_kind_it_is_in() -> None:
    """LP2015 (a word not among the allowed ones) and LP2016 (an integer out
    of range) inside a node's configuration link to that node kind's section
    (found by the new-user trial: `mode: al` linked to #wire-forms)."""
    import loopc

    src = (ROOT / "tests" / "fixtures" / "schema" / "fan_out_join_mode.yaml").read_text()
    bad_mode = src.replace("      mode: any\n", "      mode: al\n")
    (d,) = [x for x in loopc.check_source(bad_mode).diagnostics if x.code == "LP2015"]
    assert d.section == "node-join"
    assert d.reference_url.endswith("/reference.md#node-join")
    loop = (ROOT / "tests" / "fixtures" / "analysis" / "loop_back_edge_outside_body_ok.yaml").read_text()
    (d,) = loopc.check_source(loop.replace("iterations: 3", "iterations: 0")).diagnostics
    assert (d.code, d.section) == ("LP2016", "node-loop")
    (d,) = loopc.check_source(codes.get("LP2016").example).diagnostics  # retry.maxAttempts
    assert (d.code, d.section) == ("LP2016", "retry")
