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
from loopc.codes import section
from loopc.codes.sections import SECTIONS

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


@pytest.mark.slow
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


# -- docstrings and comments in the source ------------------------------------
# The source cites loopc's own documentation (docs/reference.md#node-join,
# docs/ir.md#semantic-digest), never the design documents.  `§` is allowed only
# after a public standard (RFC 8785 §3.2.2.3).
SOURCE_CITATION = re.compile(
    r"\bseeds?\s+0\d\d\b|\bseeds?\s*§|\bthe seed'?s?\b|\bseed\s+document|/seeds/|syntax sheet|\bsheet\s*§",
    re.IGNORECASE)
SECTION_SIGN = re.compile(r"§")
PUBLIC_STANDARD = re.compile(r"\b(RFC|ECMA-?|ISO)\s*[\d-]+\s*§$")
#: (path, line text) pairs allowed to mention a design document; keep it empty
#: unless a line truly must (none does today).
CITATION_ALLOWLIST: frozenset[tuple[str, str]] = frozenset()
DOC_ANCHOR = re.compile(r"docs/([a-z][a-z0-9-]*\.md)#([A-Za-z0-9_-]+)")
MD_LINK_ANCHOR = re.compile(r"\]\(([a-z][a-z0-9-]*\.md)?#([A-Za-z0-9_-]+)\)")
#: ``docs/x.md "Title"`` / ``docs/x.md §Title`` cannot be checked: cite ``docs/x.md#anchor``.
UNCHECKED_DOC_CITATION = re.compile(r'docs/[a-z][a-z0-9-]*\.md,?\s*(?:"[A-Za-z]|§)')


def _source_files() -> list[Path]:
    return sorted(p for p in (ROOT / "src" / "loopc").rglob("*")
                  if p.is_file() and p.suffix in {".py", ".lark", ".json", ".md", ".txt"})


def github_slug(title: str) -> str:
    """The anchor GitHub gives a heading (the rule the docs' own links use):
    lower case, code spans unwrapped, punctuation other than ``-`` and ``_``
    dropped, spaces turned into ``-``."""
    text = title.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def doc_anchors(path: Path) -> set[str]:
    """Explicit ``<a id="...">`` anchors plus every heading's slug (a repeated
    heading gets ``-1``, ``-2``...); headings inside code fences do not count."""
    text = path.read_text("utf-8")
    found = set(re.findall(r'<a id="([^"]+)"></a>', text))
    seen: dict[str, int] = {}
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        m = None if fenced else re.match(r"#{1,6} +(.+?) *#*$", line)
        if m:
            slug = github_slug(m.group(1))
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            found.add(slug if n == 0 else f"{slug}-{n}")
    return found


DOC_ANCHORS = {p.name: doc_anchors(p) for p in sorted((ROOT / "docs").glob("*.md"))}


def test_github_slug_rule() -> None:
    assert github_slug("Schema (passes 2–3)") == "schema-passes-23"
    assert github_slug("Output formats (`loopc check --format NAME`)") == "output-formats-loopc-check---format-name"
    assert "the-typed-ir-model" in DOC_ANCHORS["api.md"]
    assert {"node-join", "retry"} <= DOC_ANCHORS["reference.md"]


def cites_a_design_document(line: str) -> bool:
    """A design-document citation, or a ``§`` that follows no public standard."""
    bare_section = any(not PUBLIC_STANDARD.search(line[:m.end()]) for m in SECTION_SIGN.finditer(line))
    return bool(SOURCE_CITATION.search(line)) or bare_section


def test_no_design_document_citations_in_the_source() -> None:
    hits = []
    for p in _source_files():
        rel = str(p.relative_to(ROOT))
        for i, line in enumerate(p.read_text("utf-8").splitlines(), 1):
            if (rel, line.strip()) in CITATION_ALLOWLIST:
                continue
            if cites_a_design_document(line):
                hits.append(f"{rel}:{i}: {line.strip()}")
    assert not hits, ("cite docs/reference.md#anchor (or docs/language.md, docs/ir.md) "
                      "instead of a design document:\n" + "\n".join(hits))


def test_the_citation_rules_catch_what_they_should() -> None:
    for bad in ("(seed 004 §4.7)", "Seed 000 section 8", "see the seed's rule", "(syntax sheet §3)",
                "(sheet §7)", "(§5 pass 11)", "docs/ir.md §Digest"):
        assert cites_a_design_document(bad), bad
    for fine in ("so seed the encoder's caches; no hash-seed dependence; seeded at roots",
                 "(RFC 8785 §3.2.2.3)", "(I-JSON, RFC 7493 §2.2)", "docs/reference.md#node-join"):
        assert not cites_a_design_document(fine), fine
    assert UNCHECKED_DOC_CITATION.search('(docs/editors.md, "Completion")')
    assert not UNCHECKED_DOC_CITATION.search("(docs/editors.md#features)")


def test_cli_help_has_no_design_document_citations() -> None:
    import click
    from loopc.cli.main import cli

    def walk(cmd: click.Command, ctx: click.Context) -> list[str]:
        texts = [cmd.get_help(ctx)]
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                assert sub is not None
                texts += walk(sub, click.Context(sub, info_name=name, parent=ctx))
        return texts

    texts = walk(cli, click.Context(cli, info_name="loopc"))
    assert len(texts) > 5
    hits = [t for t in texts if CITATION.search(t) or "§" in t]
    assert not hits, hits


def test_every_cited_docs_anchor_exists() -> None:
    """Every ``docs/X.md#anchor`` in the source, README and docs, and every
    ``[..](X.md#anchor)`` link in the docs, names a heading or ``<a id>`` of
    that page; a citation by quoted title is not allowed in the source."""
    broken, unchecked = [], []
    for p in [*_source_files(), ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = p.read_text("utf-8")
        rel = str(p.relative_to(ROOT))
        for m in DOC_ANCHOR.finditer(text):
            if m.group(2) not in DOC_ANCHORS.get(m.group(1), set()):
                broken.append(f"{rel}: {m.group(0)}")
        if p.suffix == ".md":
            for m in MD_LINK_ANCHOR.finditer(text):
                page = m.group(1) or p.name
                if page in DOC_ANCHORS and m.group(2) not in DOC_ANCHORS[page]:
                    broken.append(f"{rel}: {m.group(0)}")
        elif p.suffix == ".py":
            unchecked += [f"{rel}: {m.group(0)}" for m in UNCHECKED_DOC_CITATION.finditer(text)]
    assert not broken, broken
    assert not unchecked, ("cite docs/X.md#anchor, not a quoted title:", unchecked)


def _resolve(dotted: str) -> object:
    import importlib

    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def _documented_api_names() -> list[str]:
    """Dotted ``loopc.*`` names in docs/api.md, except the table of removed
    and moved paths (those are documented as gone)."""
    text = (ROOT / "docs" / "api.md").read_text("utf-8")
    start = text.index("## Moved import paths")
    end = text.index("\n## ", start + 1)
    text = text[:start] + text[end:]
    return sorted(set(re.findall(r"`(loopc(?:\.[A-Za-z_]\w*)+)", text)))


def _needs_docstring(obj: object) -> bool:
    import inspect

    return inspect.isclass(obj) or inspect.isfunction(obj) or inspect.ismodule(obj) or inspect.ismethod(obj)


def test_every_public_name_has_a_docstring() -> None:
    """``loopc.__all__``, the public methods and properties those classes
    define, and every ``loopc.*`` name docs/api.md documents."""
    import inspect

    import loopc

    missing = []
    for name in loopc.__all__:
        obj = getattr(loopc, name)
        if not _needs_docstring(obj):
            continue
        if not (obj.__doc__ or "").strip():
            missing.append(f"loopc.{name}")
        if inspect.isclass(obj):
            for attr, value in vars(obj).items():
                fn = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
                if not attr.startswith("_") and inspect.isfunction(fn) and not (fn.__doc__ or "").strip():
                    missing.append(f"loopc.{name}.{attr}")
    documented = _documented_api_names()
    assert len(documented) > 20
    for dotted in documented:
        obj = _resolve(dotted)
        if _needs_docstring(obj) and not (getattr(obj, "__doc__", None) or "").strip():
            missing.append(dotted)
    assert not missing, missing
