"""Adding one optional field to one node kind touches only the registry
(docs/architecture.md#add-one-field-to-one-node-kind).

The test declares ``requestApproval.followUp`` (the issue's ``reminder``, named
so that a real ``reminder`` field does not collide with it) — an optional template,
introduced at a new artifact version — by amending the registry
(:func:`loopc.kinds.amended`) and nothing else, then imports loopc afresh so
every layer derives its tables from the amended registry, exactly as when the
kind module declares the field.  It shows that the source JSON Schema accepts
the key, a plan using it checks clean, a type error in its template is
diagnosed at its position, it is lowered under its wire name into the typed
IR, the artifact selects the new version while plans not using it keep their
bytes, decode(encode) round trips, the artifact budget counts it, and the
reference interpreter's approval request carries it.  The
real modules are restored afterwards.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import types
from typing import Iterator

import jsonschema
import pytest

import loopc
import loopc.kinds as current_kinds
from loopc.ir import versions as current_versions
from loopc.ir.decoder import DecodeError as current_decode_error
from loopc.ir.decoder import decode as current_decode
from loopc.ir.source_schema import source_schema as current_source_schema

PLAN = """\
apiVersion: loop.plan/v1
kind: PlanVersion
input:
  approver: {type: member, required: true}
  title: {type: string, required: true}
  tags: {type: array, items: {type: string}, required: true}
output: {}
entry: ask
nodes:
  - id: ask
    type: request_approval
    input:
      approver: {type: member, required: true}
      title: {type: string, required: true}
      tags: {type: array, items: {type: string}, required: true}
    requestApproval:
      assignee: "{{ input.approver }}"
      summary: "Ship {{ input.title }}?"
EXTRA
  - id: done
    type: end
    end: {status: succeeded}
  - id: refused
    type: end
    end: {status: failed, code: rejected}
edges:
  - {id: e1, from: {node: ask, port: approved}, to: {node: done}}
  - {id: e2, from: {node: ask, port: rejected}, to: {node: refused}}
"""

WITHOUT = PLAN.replace("EXTRA\n", "")
WITH = PLAN.replace("EXTRA", '      followUp: "Still waiting on {{ input.title }}"')
#: a list does not render as text: a type error inside the template
BAD = PLAN.replace("EXTRA", '      followUp: "{{ input.tags }}"')

NEW = current_versions.LATEST + 1


def _loopc_modules() -> dict[str, types.ModuleType]:
    return {k: m for k, m in sys.modules.items() if k == "loopc" or k.startswith("loopc.")}


def _swap(modules: dict[str, types.ModuleType]) -> dict[str, types.ModuleType]:
    """Install ``modules`` as loopc's modules; return the ones they replace."""
    out = _loopc_modules()
    for name in out:
        del sys.modules[name]
    sys.modules.update(modules)
    return out


class Amended:
    """loopc imported afresh with ``requestApproval.followUp`` declared in the
    registry, and only there.  Its modules are installed in ``sys.modules``
    only inside :meth:`active` (so their lazy imports resolve among
    themselves); outside, the real modules are in place."""

    def __init__(self) -> None:
        saved = _swap({})
        self.amendment = contextlib.ExitStack()
        try:
            import loopc.kinds as kinds
            from loopc.kinds.base import S_TEMPLATE, SourceField
            from loopc.kinds.spec import INSTR, F

            old = kinds.KINDS["request_approval"]
            amended = kinds.amended(
                old.evolve(
                    source={
                        **old.source,
                        "followUp": SourceField(S_TEMPLATE, form="template", type="string", render=True),
                    },
                    wire=old.wire.evolve(fields={**old.wire.fields, "followUp": F(INSTR, required=False, since=NEW)}),
                )
            )
            # held open for the fresh modules' lifetime (closed by the fixture)
            self.amendment.enter_context(amended)
            import loopc as fresh
            from loopc.compiler import yamlload

            # the compiled composer's node classes are process-wide state of
            # its extension module (one per process, not per import): binding
            # the fresh classes would hand them to the real loader too
            yamlload._FAST = False
            from loopc.compiler import model
            from loopc.ir import budget, decoder, source_schema, versions
            from loopc.interpreter import engine, program
            from loopc.ir import model as ir_model

            self.ns = types.SimpleNamespace(
                engine=engine,
                program=program,
                loopc=fresh,
                kinds=kinds,
                model=model,
                ir_model=ir_model,
                decoder=decoder,
                budget=budget,
                source_schema=source_schema,
                versions=versions,
            )
        finally:
            self.modules = _swap(saved)

    @contextlib.contextmanager
    def active(self) -> Iterator[types.SimpleNamespace]:
        saved = _swap(self.modules)
        try:
            yield self.ns
        finally:
            self.modules = _swap(saved)


@pytest.fixture(scope="module")
def follow_up() -> Iterator[Amended]:
    a = Amended()
    yield a
    with a.active():
        a.amendment.close()


def _yaml(text: str) -> object:
    from ruamel.yaml import YAML

    return YAML(typ="safe", pure=True).load(text)


def test_only_the_amended_modules_see_the_field(follow_up: Amended) -> None:
    assert "followUp" not in current_kinds.KINDS["request_approval"].source
    with follow_up.active() as ns:
        assert "followUp" in ns.kinds.KINDS["request_approval"].source
        assert sys.modules["loopc.kinds"] is ns.kinds
    assert sys.modules["loopc.kinds"] is current_kinds
    res = loopc.check_source(WITH)
    assert [d.code for d in res.diagnostics] == ["LP2007"]  # an unknown key without the amendment


def test_amended_restores_the_registry_and_its_tables_on_exit() -> None:
    old = current_kinds.KINDS["request_approval"]
    before = current_kinds.tables()
    new = old.evolve(summary="amended")
    with pytest.raises(LookupError, match="inside"):
        with current_kinds.amended(new) as t:
            assert t is current_kinds.tables() is not before
            assert t.kinds["request_approval"] is new is current_kinds.KINDS["request_approval"]
            assert current_kinds.request_approval.KIND is new
            raise LookupError("inside")
    assert current_kinds.KINDS["request_approval"] is old is current_kinds.request_approval.KIND
    assert current_kinds.tables() == before
    with pytest.raises(KeyError):
        with current_kinds.amended(old.evolve(name="no_such_kind")):
            pass


def test_the_source_schema_accepts_the_field(follow_up: Amended) -> None:
    assert list(jsonschema.Draft7Validator(current_source_schema()).iter_errors(_yaml(WITH)))
    with follow_up.active() as ns:
        v = jsonschema.Draft7Validator(ns.source_schema.source_schema())
        assert not list(v.iter_errors(_yaml(WITH)))
        wrong = _yaml(WITH.replace('"Still waiting on {{ input.title }}"', "3"))
        assert [e.validator for e in v.iter_errors(wrong)]  # a template is a string


def test_a_plan_using_it_checks_clean(follow_up: Amended) -> None:
    with follow_up.active() as ns:
        res = ns.loopc.check_source(WITH)
        assert res.ok and res.diagnostics == ()
        cfg = res.plan.nodes["ask"].config
        assert isinstance(cfg, ns.model.RequestApproval)
        assert isinstance(cfg.follow_up, ns.model.Template)
        assert cfg.follow_up.text == "Still waiting on {{ input.title }}"
        assert (
            res.source_map.span(cfg, "follow_up").line
            == WITH.splitlines().index('      followUp: "Still waiting on {{ input.title }}"') + 1
        )
        # optional, after the declared attributes: positional construction unchanged
        t = ns.model.Template("x")
        assert ns.model.RequestApproval(t, t).follow_up is None


def test_a_type_error_in_its_template_is_diagnosed_at_its_position(follow_up: Amended) -> None:
    with follow_up.active() as ns:
        res = ns.loopc.check_source(BAD)
    assert [d.code for d in res.diagnostics] == ["LP3030"]  # a list interpolated into text
    d = res.diagnostics[0]
    assert "`followUp`" in d.message and d.node == "ask"
    # the same diagnostic as the kind's declared template field with the same text gets
    same = loopc.check_source(BAD.replace("followUp:", "#").replace('"Ship {{ input.title }}?"', '"{{ input.tags }}"'))
    assert [(x.code, x.message.replace("`summary`", "`followUp`")) for x in same.diagnostics] == [(d.code, d.message)]
    lines = BAD.splitlines()
    line = next(i for i, t in enumerate(lines, 1) if "followUp:" in t)
    start = lines[line - 1].index('"{{') + 1
    end = lines[line - 1].rindex('"') + 2
    assert d.span.line == d.span.end_line == line
    assert start <= d.span.column < d.span.end_column <= end


def test_it_is_lowered_under_its_wire_name_at_the_new_version(follow_up: Amended) -> None:
    with follow_up.active() as ns:
        res = ns.loopc.compile_source(WITH)
        assert res.ok, res.diagnostics
        assert res.artifact.version == NEW
        assert f'"loop.plan.artifact/v{NEW}"'.encode() in res.bytes
        node = res.artifact.plan.node("ask")
        assert isinstance(node.config, ns.ir_model.RequestApprovalConfig)
        assert isinstance(node.config.follow_up, ns.ir_model.Template)
        assert ns.ir_model.config_to_json(node.config)["followUp"][0] == "template"
        assert ("/followUp", node.config.follow_up) in list(node.config.instrs())
        assert ns.versions.LATEST == NEW and NEW not in current_versions.VERSIONS


def test_plans_not_using_it_keep_their_bytes(follow_up: Amended) -> None:
    before = loopc.compile_source(WITHOUT)
    with follow_up.active() as ns:
        after = ns.loopc.compile_source(WITHOUT)
    assert before.ok and after.ok
    assert after.bytes == before.bytes and after.digest == before.digest
    assert after.artifact.version == 1


def test_decode_encode_round_trips(follow_up: Amended) -> None:
    with follow_up.active() as ns:
        res = ns.loopc.compile_source(WITH)
        decoded = ns.decoder.decode(res.bytes, canonical=True)
        assert decoded == res.artifact
        assert ns.ir_model.encode(decoded) == res.bytes
    with pytest.raises(current_decode_error):  # today's decoder knows neither the version nor the field
        current_decode(res.bytes)


def test_the_budget_counts_it(follow_up: Amended) -> None:
    with follow_up.active() as ns:
        with_it = ns.budget.project(ns.loopc.check_source(WITH))
        without = ns.budget.project(ns.loopc.check_source(WITHOUT))
        lowered = ns.loopc.compile_source(WITH).artifact.plan.node("ask").config.follow_up
        count = len(list(ns.ir_model.walk_instr(lowered)))
    assert count >= 2  # the template and its reference
    assert with_it.instructions == without.instructions + count
    assert with_it.top["instructions"] == ("node", "ask", without.top["instructions"][2] + count)
    assert with_it.bytes > without.bytes


def _request(ns: types.SimpleNamespace, text: str, plan_input: dict[str, object]) -> dict[str, object]:
    res = ns.loopc.compile_source(text)
    assert res.ok, res.diagnostics
    eng = ns.engine.Engine(ns.program.load_program(res.artifact))
    eng.start(plan_input)
    (req,) = [r["request"] for step in eng.steps for r in step if r["kind"] == "effect.reserved"]
    return dict(req)


def test_the_interpreter_request_carries_it(follow_up: Amended) -> None:
    """Every declared field of a kind without custom fields reaches its
    effect request (interpreter/attempts.py ``declared_request``): a new
    field is never dropped silently."""
    run = {"approver": "mem_ana", "title": "v2", "tags": []}
    with follow_up.active() as ns:
        assert _request(ns, WITH, run) == {
            "assignee": "mem_ana",
            "summary": "Ship v2?",
            "followUp": "Still waiting on v2",
        }
        assert _request(ns, WITHOUT, run) == {"assignee": "mem_ana", "summary": "Ship v2?"}
        attempts = importlib.import_module("loopc.interpreter.attempts")  # the fresh module
        declared = [w for w, *_ in attempts.declared_request("request_approval") or ()]
        assert declared == [*current_kinds.KINDS["request_approval"].wire.fields, "followUp"]


def test_a_literal_field_is_carried_as_it_is() -> None:
    """A literal wire field (a choice) of a kind without custom fields is
    carried into the request as its wire value, never evaluated."""
    from loopc.interpreter.attempts import declared_request
    from loopc.kinds.base import SourceField, s_choice
    from loopc.kinds.spec import F, Str

    old = current_kinds.KINDS["request_approval"]
    new = old.evolve(
        source={**old.source, "priority": SourceField(s_choice("low", "high"), choices=("low", "high"))},
        wire=old.wire.evolve(
            fields={**old.wire.fields, "priority": F(Str(enum={"low": 1, "high": 1}), required=False)}
        ),
    )
    with current_kinds.amended(new):
        fields = declared_request("request_approval")
    assert fields is not None
    assert [w for w, *_ in fields] == [*old.wire.fields, "priority"]
    hows = {w: how for w, _, how, _ in fields}
    assert (hows["assignee"], hows["summary"], hows["feedbackScope"], hows["priority"]) == (
        "value",
        "text",
        "value",
        "literal",
    )
