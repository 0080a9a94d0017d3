"""``python tools/regen.py`` (docs/architecture.md#regeneration) owns every
generated file: each ``docs/schema/*.json``, each docs page that says it is
generated, and the interpreter's shipped schemas come out of one of its
stages.  The stages' outputs themselves are checked current by the tests of
each generator (test_codes, test_registry, test_schemas, test_golden,
test_plan, test_interpreter); the full ``--check`` run compiles every golden
and runs every scenario, so it is the slow test here."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import types
from typing import Any, Iterator

import pytest

from conftest import ROOT, TOOLS
import regen  # tools/, on sys.path by conftest

#: the stages cheap enough for the fast tier (no compile of every golden)
CHEAP = (
    "diagnostics page",
    "node-kinds page",
    "docs fragments",
    "artifact and source schemas",
    "journal and protocol schemas",
)


def _cheap_files() -> set:
    files: set = set()
    for name, generate in regen.STAGES:
        if name in CHEAP:
            files |= set(generate({}, frozenset()).files)
    return files


def test_every_generated_file_has_a_stage() -> None:
    files = _cheap_files()
    schemas = set((ROOT / "docs" / "schema").glob("*.json")) - {
        ROOT / "docs" / "schema" / "loop.plan.catalog.v1.schema.json"  # the plan goldens' stage
    }
    assert schemas - files == set()
    generated_pages = {p for p in (ROOT / "docs").glob("*.md") if "Generated from" in p.read_text("utf-8")[:600]}
    assert generated_pages and generated_pages - files == set()
    shipped = set((ROOT / "src" / "loopc" / "interpreter" / "schema").glob("*.json"))
    assert shipped and shipped - files == set()


def test_every_stage_is_named_in_the_docs() -> None:
    doc = (TOOLS / "regen.py").read_text("utf-8")
    assert len(regen.STAGES) == 8 and all(f"{i}. " in doc for i in range(1, 9))


def test_no_generated_file_points_to_an_old_command() -> None:
    for p in _cheap_files():
        text = p.read_text("utf-8")
        assert "loopc.ir.golden" not in text and "loopc.plan.golden" not in text, p


@pytest.mark.slow
def test_check_finds_nothing_stale() -> None:
    proc = subprocess.run(
        [sys.executable, str(TOOLS / "regen.py"), "--check"], capture_output=True, text=True, cwd="/", timeout=600
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == ""


def test_docs_fragments_are_current() -> None:
    import docs_fragments

    files, errors = docs_fragments.fragment_files()
    assert errors == []
    assert {p.name for p in files} >= {"api.md", "architecture.md", "ir.md", "reference.md"}
    stale = sorted(str(p.relative_to(ROOT)) for p, data in files.items() if p.read_bytes() != data)
    assert stale == [], "run python tools/regen.py"


def test_a_fragment_is_rewritten_between_its_markers_only(tmp_path) -> None:
    import docs_fragments
    from loopc.ir.versions import LATEST

    page = tmp_path / "page.md"
    page.write_text(
        "before v1–v2 <!-- regen:artifact-versions -->v1–v2<!-- /regen:artifact-versions --> after\n"
        "<!-- regen:no-such-fragment -->keep<!-- /regen:no-such-fragment -->\n",
        encoding="utf-8",
    )
    files, errors = docs_fragments.fragment_files(tmp_path)
    assert files[page].decode() == (
        f"before v1–v2 <!-- regen:artifact-versions -->v1–v{LATEST}<!-- /regen:artifact-versions --> after\n"
        "<!-- regen:no-such-fragment -->keep<!-- /regen:no-such-fragment -->\n"
    )
    assert len(errors) == 1 and "no-such-fragment" in errors[0]


def test_every_fragment_is_used_in_the_docs() -> None:
    """Each table docs_fragments derives is written between its markers in
    some page (a table copied back by hand would leave its fragment unused)."""
    import docs_fragments

    used = set()
    for page in (ROOT / "docs").glob("*.md"):
        used |= {m.group(2) for m in docs_fragments._MARKED.finditer(page.read_text("utf-8"))}
    assert set(docs_fragments.FRAGMENTS) - used == set()


def test_a_new_field_and_a_new_kind_reach_the_derived_tables() -> None:
    """A field declared on a kind shows in docs/ir.md's node-configs table,
    docs/conformance.md's ``<where>`` rows (an approval's request fields) and,
    rendered as text, the rendered-fields list; a new kind in the opcode list,
    the node-configs table, the port order and the port-output tables — with
    no edit in the docs (docs/architecture.md#add-one-field-to-one-node-kind)."""
    import docs_fragments

    from loopc import kinds
    from loopc.kinds.base import S_TEMPLATE, Kind, Ports, SourceField
    from loopc.kinds.spec import INSTR, F, Obj

    old = kinds.KINDS["request_approval"]
    field = old.evolve(
        source={**old.source, "followUp": SourceField(S_TEMPLATE, form="template", type="string", render=True)},
        wire=old.wire.evolve(fields={**old.wire.fields, "followUp": F(INSTR, required=False, since=9)}),
    )
    with kinds.amended(field):
        assert "`followUp` (v9, instr, optional)" in docs_fragments.FRAGMENTS["node-configs-table"]()
        assert "`request_approval` `followUp`" in docs_fragments.FRAGMENTS["rendered-fields"]()
        assert "`requestApproval.followUp`" in docs_fragments.FRAGMENTS["template-keys"]()
        assert " or `followUp` |" in docs_fragments.FRAGMENTS["where-table"]()
    assert "followUp" not in docs_fragments.FRAGMENTS["node-configs-table"]()
    toy = Kind(
        name="noop",
        config_key="noop",
        since=9,
        summary="Do nothing.",
        source={},
        wire=Obj({}),
        ports=Ports(fixed=("completed",), outputs={"completed": "nothing"}),
        effects="none",
    )
    with _added(kinds, toy):
        assert "`noop` (v9)" in docs_fragments.FRAGMENTS["op-list"]()
        assert "| `noop` (v9) |" in docs_fragments.FRAGMENTS["node-configs-table"]()
        assert "`noop` `completed`" in docs_fragments.FRAGMENTS["source-port-order"]()
        assert "| `noop` | `completed` | nothing |" in docs_fragments.FRAGMENTS["port-outputs-table"]()
        assert "`noop`" in docs_fragments.FRAGMENTS["node-kinds-table"]()


@contextlib.contextmanager
def _added(kinds: types.ModuleType, kind: Any) -> Iterator[None]:
    """The registry with a new ``kind`` placed before ``end`` (``kinds.amended``
    replaces kinds only); restored on exit."""
    saved = dict(kinds.KINDS)
    items = list(saved.items())
    items.insert(len(items) - 1, (kind.name, kind))
    kinds.KINDS.clear()
    kinds.KINDS.update(items)
    kinds.tables.cache_clear()
    try:
        yield
    finally:
        kinds.KINDS.clear()
        kinds.KINDS.update(saved)
        kinds.tables.cache_clear()


def test_a_fragment_that_cannot_read_its_declaration_is_an_error(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A scenario without its ``# Stage N:`` line (or any declaration a
    fragment cannot read) is reported by name; the page keeps its text."""
    import docs_fragments

    def broken() -> str:
        raise ValueError("x.yaml: no '# Stage N: what it proves' line")

    monkeypatch.setitem(docs_fragments.FRAGMENTS, "scenario-table", broken)
    page = tmp_path / "page.md"
    page.write_text("<!-- regen:scenario-table -->kept<!-- /regen:scenario-table -->\n", encoding="utf-8")
    files, errors = docs_fragments.fragment_files(tmp_path)
    assert files[page].decode() == page.read_text(encoding="utf-8")
    assert errors == [
        f"{tmp_path.name}/page.md: fragment 'scenario-table': x.yaml: no '# Stage N: what it proves' line"
    ]


def test_a_stage_that_fails_is_one_error_line(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A generator that raises (a new kind without its interpreter handler)
    is reported as one line naming the stage; the later stages still run."""

    def broken(pending, removed):  # type: ignore[no-untyped-def]
        raise ImportError("node kind(s) ['noop'] have no interpreter handler")

    ran = []

    def later(pending, removed):  # type: ignore[no-untyped-def]
        ran.append(True)
        return regen.Stage({}, [], [])

    monkeypatch.setattr(regen, "STAGES", (("scenario pins", broken), ("after", later)))
    lines: list[str] = []
    assert regen.regen(check=True, out=lines.append) == 1
    assert lines == ["error (scenario pins): ImportError: node kind(s) ['noop'] have no interpreter handler"]
    assert ran == [True]
