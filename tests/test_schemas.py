"""The journal and protocol schemas (issue 23 Pinned; docs/conformance.md#schemas):
generated from one declaration (loopc.interpreter.schemas), shipped as package
data, mirrored into docs/schema/, and true of what the reference writes —
every journal record on every golden scenario, every protocol reply, with and
without crashes inside delivery steps."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import ROOT
from loopc.conformance import SCENARIO_DIR, scenarios
from loopc.interpreter import schemas
from loopc.interpreter.clock import VirtualClock, format_instant
from loopc.interpreter.conform import delivery_divergences, load_request
from loopc.interpreter.protocol import Session
from loopc.interpreter.runner import prepare_file, run_id_of, run_prepared, strip_markers

SCENARIOS = scenarios(SCENARIO_DIR)


def test_package_and_docs_copies_are_generated_from_the_declaration() -> None:
    files = schemas.generated_files(ROOT / "docs" / "schema")
    assert len(files) == 4
    for path, data in files.items():
        assert path.read_bytes() == data, f"{path} is stale: run python tools/regen.py"


def test_the_declaration_names_every_record_kind_the_engine_writes() -> None:
    from loopc.interpreter import engine

    # the engine and the layers it is built from (its classes' modules)
    mods = {c.__module__ for c in engine.Engine.__mro__ if c.__module__.startswith("loopc.interpreter.")}
    assert len(mods) > 1
    src = "".join((ROOT / "src" / (m.replace(".", "/") + ".py")).read_text(encoding="utf-8") for m in sorted(mods))
    written = set(re.findall(r'_rec\(\s*"([a-z_.]+)"', src))
    assert written == set(schemas.RECORDS)


def _prep(path: str):
    prep = prepare_file(path)
    assert not isinstance(prep, list), prep
    return prep


def test_every_golden_run_has_its_own_run_id() -> None:
    ids = {run_id_of(_prep(p)) for p in SCENARIOS}
    assert None not in ids and len(ids) == len(SCENARIOS)


def test_every_record_on_every_golden_validates_against_the_journal_schema() -> None:
    import jsonschema

    v = jsonschema.Draft202012Validator(schemas.load_schema(schemas.JOURNAL_SCHEMA_NAME))
    kinds = set()
    for path in SCENARIOS:
        rep = run_prepared(_prep(path))
        for r in strip_markers(rep.journal):
            kinds.add(r["kind"])
            errors = [e.message for e in v.iter_errors(r)]
            assert not errors, (Path(path).name, r, errors)
    assert len(kinds) >= 29  # the refusal records have no golden yet


def _serve(prep, crashes: tuple[str, ...]) -> tuple[list[tuple[str, object]], dict]:
    """Drive the reference Session as the kit would; every reply with the
    name of its message."""
    s = Session()
    replies: list[tuple[str, object]] = [("loadReply", s.load(load_request(prep, crashes=crashes)))]
    clock = VirtualClock()
    for ev in prep.scenario.events:
        if ev.kind == "expectStatus":
            continue
        req = {"op": "event", "index": ev.index, "event": ev.to_json()}
        if ev.kind == "advance":
            req["to"] = format_instant(clock.advance(ev.args["duration"]))
        assert schemas.problems("eventRequest", req) == []
        replies.append(("eventReply", s.event(req)))
    report = s.report()
    replies.append(("reportReply", report))
    return replies, report


@pytest.mark.parametrize("crashes", [(), ("afterEffectSubmit",)], ids=["plain", "afterEffectSubmit"])
@pytest.mark.slow
def test_every_reference_reply_validates_and_a_crash_inside_a_delivery_changes_no_journal(crashes) -> None:
    for path in SCENARIOS:
        prep = _prep(path)
        assert schemas.problems("loadRequest", load_request(prep, crashes=crashes)) == []
        replies, report = _serve(prep, crashes)
        for name, reply in replies:
            assert schemas.problems(name, reply) == [], (Path(path).name, name, reply)
        ref = run_prepared(prep)
        want = strip_markers(ref.journal)
        assert strip_markers(report["journal"]) == want, Path(path).name
        assert delivery_divergences(want, report["deliveries"], crashed=bool(crashes)) == [], Path(path).name
        if crashes:
            n = sum(1 for r in want if r["kind"] in ("effect.delivered", "effect.failed"))
            assert len(report["deliveries"]) == 2 * n


def test_problems_point_at_the_offending_member() -> None:
    bad = {"status": "done", "output": None, "error": None, "state": {}, "visits": {}, "attempts": {},
           "deliveries": [], "journal": [{"kind": "run.cancelled", "at": "2026-01-01T00:00:00Z", "seq": True,
                                          "step": 1, "event": None}]}
    got = dict(schemas.problems("reportReply", bad))
    assert set(got) == {"/status", "/journal/0/seq"}, got
