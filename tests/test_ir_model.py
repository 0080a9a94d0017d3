"""The typed IR model (docs/api.md "The typed IR model"): decode returns it,
lowering builds it, one encoder serialises it — ``decode(encode(m)) == m``
and ``encode(decode(b)) == b`` on every golden, compiled example and fixture."""
from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopc.ir import decode, encode, evaluate

from loopc.ir import model as M
from loopc.pipeline import compile_source
from loopc.ir.canonical import canonical_bytes
from loopc.ir.evaluator import EvaluationError
from loopc.ir.surface import CONFIGS

from conftest import ROOT
import golden_ir as G  # tools/, on sys.path by conftest
CASES = list(G.cases())
IDS = [f"{c.parent.name}/{c.name}" for c in CASES]
from conftest import EXAMPLES


def _golden_bytes(case: Path) -> bytes:
    return canonical_bytes(json.loads((case / "expected.json").read_text(encoding="utf-8")))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_golden_round_trips_through_the_model(case: Path) -> None:
    raw = _golden_bytes(case)
    art = decode(raw)
    assert isinstance(art, M.Artifact) and isinstance(art.plan, M.Plan)
    assert encode(art) == raw                       # encode(decode(b)) == b
    assert decode(encode(art)) == art               # decode(encode(m)) == m
    assert M.to_json(art) == json.loads(raw)
    # what lowering builds is the same model
    res = compile_source((case / "source.yaml").read_bytes())
    assert res.ok and res.bytes == raw
    assert res.artifact == art
    assert encode(res.artifact) == raw


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_examples_round_trip(path: Path) -> None:
    res = compile_source(path.read_bytes())
    if not res.ok:
        pytest.skip("example does not compile")
    assert encode(res.artifact) == res.bytes
    assert decode(res.bytes) == res.artifact


def test_config_classes_cover_the_wire_surface() -> None:
    """Drift: each config class has exactly its opcode's wire members."""
    assert set(M.CONFIG_CLASSES) == set(CONFIGS)
    for op, spec in CONFIGS.items():
        assert sorted(M.config_wire_fields(op)) == sorted(spec.fields), op
        assert M.CONFIG_CLASSES[op].OP == op


def test_typed_access_and_lookups() -> None:
    raw = _golden_bytes(ROOT / "golden" / "switch" / "all_match_join")
    art = decode(raw)
    plan = art.plan
    assert [n.id for n in plan.nodes] == sorted(n.id for n in plan.nodes)
    route = plan.node("route")
    assert route is art.node("route") and route.op == "switch"
    assert isinstance(route.config, M.SwitchConfig) and route.config.mode == "all_match"
    assert [p.name for p in route.source_ports] == ["legal", "security", "general"]
    for p in route.source_ports:
        assert p.edge is not None and plan.edge(p.edge).from_node == "route"
    assert plan.scope_decl("route").join == "merge"
    assert isinstance(route.config.cases[0].when, M.INSTR_CLASSES)
    with pytest.raises(KeyError):
        plan.node("nope")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        route.id = "x"  # type: ignore[misc]
    pointers = [p for p, _ in art.instrs()]
    assert any(p.startswith("/plan/nodes/") and "/config/cases/0/when" in p for p in pointers)
    assert all(isinstance(i, M.INSTR_CLASSES) for _, i in art.instrs())


def test_evaluate_typed_and_wire_forms_agree() -> None:
    wire = ["template", "string", ["lit", "string", "n="], ["ref", "number", "input", "n"]]
    typed = M.instr_from_json(wire)
    assert isinstance(typed, M.Template)
    assert evaluate(typed, {"input": {"n": 3}}) == evaluate(wire, {"input": {"n": 3}}) == "n=3"


def test_evaluator_raises_only_its_own_error() -> None:
    big = "P" + "9" * 5000 + "D"
    t = M.type_desc_of("duration")
    cmp = M.Binary("lt", M.type_desc_of("boolean"), M.Lit(t, big), M.Lit(t, "PT1S"))
    assert evaluate(cmp, {}) is False
    assert evaluate(M.Binary("gt", M.type_desc_of("boolean"), M.Lit(t, big), M.Lit(t, "P1D")), {}) is True
    for bad in (["nope", "string"], ["lit"], 3, ["and", "boolean", ["lit", "boolean", True]]):
        with pytest.raises(EvaluationError):
            evaluate(bad, {})  # type: ignore[arg-type]
    huge = M.Template(M.type_desc_of("string"), (M.Lit(M.type_desc_of("number"), 10 ** 5000),))
    with pytest.raises(EvaluationError):
        evaluate(huge, {})


# -- property tests over instruction trees and contracts --------------------

_KINDS = ("string", "number", "boolean", "duration", "object", "unknown", "null", "scope")
_desc = st.builds(M.type_desc_of, st.sampled_from(_KINDS), st.integers(0, 2))
_scalar = st.one_of(st.none(), st.booleans(), st.integers(-(2 ** 53) + 1, 2 ** 53 - 1),
                    st.text(max_size=5))
_json = st.recursive(_scalar, lambda c: st.one_of(st.lists(c, max_size=3),
                                                    st.dictionaries(st.text(max_size=3), c, max_size=3)),
                     max_leaves=6)
_leaf = st.one_of(
    st.builds(M.Lit, _desc, _json),
    st.builds(M.Ref, _desc, st.sampled_from(("input", "run.state", "output", "item")),
              st.lists(st.text(min_size=1, max_size=4), max_size=3).map(tuple)),
)


def _compound(children: st.SearchStrategy[M.Instr]) -> st.SearchStrategy[M.Instr]:
    many = st.lists(children, min_size=2, max_size=3).map(tuple)
    return st.one_of(
        st.builds(M.Binary, st.sampled_from(M.BINARY_OPS), _desc, children, children),
        st.builds(M.Nary, st.sampled_from(M.NARY_OPS), _desc, many),
        st.builds(M.Unary, st.sampled_from(M.UNARY_OPS), _desc, children),
        st.builds(M.MakeArray, _desc, st.lists(children, min_size=1, max_size=3).map(tuple)),
        st.builds(M.Template, _desc, st.lists(children, max_size=3).map(tuple)),
        st.lists(children, min_size=1, max_size=3).map(
            lambda kids: M.MakeObject(M.type_desc_of("object"), tuple(f"k{i}" for i in range(len(kids))),
                                      tuple(kids))),
    )


_instr = st.recursive(_leaf, _compound, max_leaves=10)


@settings(max_examples=150, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_instr)
def test_instruction_round_trip(i: M.Instr) -> None:
    wire = M.instr_to_json(i)
    assert M.instr_from_json(wire) == i
    assert M.instr_to_json(M.instr_from_json(json.loads(json.dumps(wire)))) == wire


@settings(max_examples=150, derandomize=True, deadline=None)
@given(_instr, st.dictionaries(st.sampled_from(("input", "run.state", "output", "item")),
                               st.dictionaries(st.text(min_size=1, max_size=4), _json, max_size=3)))
def test_evaluate_never_raises_foreign_errors(i: M.Instr, env: dict) -> None:
    try:
        evaluate(i, env)
    except EvaluationError:
        pass


_field = st.recursive(
    st.builds(M.FieldSchema, st.sampled_from(("string", "number", "boolean", "duration", "object", "scope")),
              st.booleans(), st.one_of(st.just(M.NO_DEFAULT), _json), st.none(),
              st.none(), st.one_of(st.none(), st.text(max_size=4)), st.one_of(st.none(), st.text(max_size=4))),
    lambda c: st.one_of(
        st.builds(M.FieldSchema, st.just("array"), st.booleans(), st.just(M.NO_DEFAULT), st.none(), c),
        st.builds(M.FieldSchema, st.just("enum"), st.booleans(), st.just(M.NO_DEFAULT),
                  st.lists(st.text(min_size=1, max_size=3), min_size=1, max_size=3).map(tuple)),
    ),
    max_leaves=4,
)


@settings(max_examples=100, derandomize=True, deadline=None)
@given(st.dictionaries(st.from_regex(r"[a-z][a-z0-9]{0,5}", fullmatch=True), _field, max_size=4))
def test_contract_round_trip(c: dict) -> None:
    c = {k: c[k] for k in sorted(c)}
    assert M.contract_from_json(json.loads(json.dumps(M.contract_to_json(c)))) == c


def test_deep_items_chain_is_iterative() -> None:
    fs = M.FieldSchema("string", True)
    for _ in range(5000):
        fs = M.FieldSchema("array", False, items=fs)
    js = M.field_to_json(fs)
    back = M.field_from_json(js)
    assert back.type == "array" and back.items is not None


def test_deep_instruction_is_iterative() -> None:
    i: M.Instr = M.Lit(M.type_desc_of("boolean"), True)
    for _ in range(5000):
        i = M.Unary("not", M.type_desc_of("boolean"), i)
    wire = M.instr_to_json(i)
    back = M.instr_from_json(wire)
    assert max(d for _, d in M.walk_instr(back)) == 5001
    assert evaluate(back, {}) is True and evaluate(wire, {}) is True


def _hard_variants(art: M.Artifact) -> list[M.Artifact]:
    """``art`` with what the C ``json`` encoder cannot write canonically
    (floats, non-BMP keys, which sort by UTF-16), annotations everywhere and
    an instruction without operands."""
    p = art.plan
    num = M.FieldSchema("number", False, 1.5, label="L", description="D")
    deep = M.FieldSchema("array", True, [0.1, {"\U0001f600": -0.0, "\uffff": 1e21}], items=num, label="A")
    contract = {"a": num, "\U0001f600k": deep, "\uffffk": deep}
    lit = M.Lit(M.type_desc_of("number"), 2.5)
    empty = M.Template(M.type_desc_of("string"), ())
    obj = M.MakeObject(M.type_desc_of("object"), ("\U0001f600", "\uffff"), (lit, empty))
    edges = tuple(attrs.evolve(e, bind={**e.bind, "\U0001f600": obj, "\uffff": lit}, label="x") for e in p.edges)
    nodes = tuple(attrs.evolve(n, input={**n.input, **contract}, label="l", description="d") for n in p.nodes)
    floats = attrs.evolve(art, plan=attrs.evolve(p, input=contract, state=contract, nodes=nodes, edges=edges))
    annotated = attrs.evolve(art, plan=attrs.evolve(p, nodes=nodes))
    return [floats, annotated]


@pytest.mark.parametrize("case", CASES[::7], ids=IDS[::7])
def test_the_encoder_writes_the_canonical_bytes_of_the_json_form(case: Path) -> None:
    """The JSON view is the encoder's text read back, and that text is what
    the reference RFC 8785 serializer writes for it (``fast=False``: the
    ``rfc8785`` package); encode_plan's projection is the semantic
    projection's canonical text and its depth scan()'s, also where RFC 8785
    and the C encoder differ."""
    from loopc.ir.canonical import scan
    from loopc.ir.digest import semantic_digest, semantic_projection

    art = decode(_golden_bytes(case))
    assert M.to_json(art) == json.loads(_golden_bytes(case))
    for a in [art, *_hard_variants(art)]:
        data = M.to_json(a)
        text, projection, depth, _ = M.encode_plan(a.plan)
        assert M.encode(a) == canonical_bytes(data, fast=False)
        assert text.encode() == canonical_bytes(data["plan"], fast=False)
        assert M.plan_to_json(a.plan) == data["plan"]
        assert [M.node_to_json(n) for n in a.plan.nodes] == data["plan"]["nodes"]
        assert [M.edge_to_json(e) for e in a.plan.edges] == data["plan"]["edges"]
        assert projection.encode() == canonical_bytes(semantic_projection(data), fast=False)
        assert depth + 1 == scan(data)[1]
        assert a.recompute_digest() == semantic_digest(data)


def test_the_json_view_reads_what_the_decoder_reads() -> None:
    """A double the encoder writes as integer digits (2^60) reads back as
    that double, as :func:`loopc.ir.decoder.parse_json` reads it; a view
    deeper than the C parser goes is read without recursion."""
    from loopc.ir.decoder import parse_json

    lit = M.Lit(M.type_desc_of("number"), 2.0**60)
    assert M.instr_to_json(lit) == parse_json(json.dumps(M.instr_to_json(lit))) == ["lit", "number", 2.0**60]
    assert type(M.instr_to_json(lit)[2]) is float
    deep = "[" * 3000 + '1,{"a":[true,null,"x"],"b":{}},-2.5e-07' + "]" * 3000
    got = M.view(deep)
    for _ in range(2999):
        got = got[0]
    assert got == [1, {"a": [True, None, "x"], "b": {}}, -2.5e-07]


def test_the_encoder_rejects_what_rfc8785_cannot_represent() -> None:
    from loopc.ir.canonical import CanonicalizationError

    art = decode(_golden_bytes(CASES[0]))
    p = art.plan
    big = M.Lit(M.type_desc_of("number"), 2**60)
    bad = attrs.evolve(art, plan=attrs.evolve(p, edges=tuple(attrs.evolve(e, bind={"x": big}) for e in p.edges)))
    assert p.edges
    with pytest.raises(CanonicalizationError):
        canonical_bytes(M.to_json(bad))
    with pytest.raises(CanonicalizationError):
        M.encode(bad)


def test_the_encoder_counts_every_version_the_surface_declares() -> None:
    """Every field, variant, enum value and alternative newer than v1 in the
    declared surface outside node configs (which the encoder reads member by
    member from the kinds) is one the encoder's version tables, or the
    instruction scan's, are read from: a newer member declared anywhere
    else fails here until the encoder counts it."""
    from loopc.ir import surface, versions
    from loopc.ir.model import encoder as E
    from loopc.kinds.spec import ByType, F, InstrArr, MapOf, Obj, Ref, Str, Tagged, TypeDesc

    counted = {
        ("FieldSchema", "type"): E._TYPE_V, ("Node", "op"): E._OP_V, ("ImplicitRoute", "action"): E._ACTION_V,
        ("Disposition", "action"): E._ACTION_V, ("ImplicitRoute", "status"): E._STATUS_V,
        ("ScopeRef", "kind"): E._SCOPE_V, ("ScopeDecl", "kind"): E._DECL_V,
    }
    configs = {id(c) for c in surface.CONFIGS.values()}
    found: list[tuple[str, str, str, int]] = []
    todo: list[tuple[str, str, object]] = [(name, "", s) for name, s in surface.DEFS.items()]
    todo.append(("Artifact", "", surface.ARTIFACT))
    while todo:
        where, key, s = todo.pop()
        if isinstance(s, F):
            if s.since > 1:
                found.append((where, key, "field", s.since))
            todo.append((where, key, s.spec))
        elif isinstance(s, Obj):
            if id(s) not in configs:
                todo.extend((where, k, f) for k, f in s.fields.items())
        elif isinstance(s, Tagged):
            found.extend((where, s.tag, t, since) for t, (_, since) in s.variants.items() if since > 1)
            todo.extend((where, k, obj) for obj, _ in s.variants.values() for k in [""])
            todo.extend((where, k, f) for k, f in s.common.items())
        elif isinstance(s, ByType):
            found.extend((where, key, alt, since) for alt, (_, since) in s.alts.items() if since > 1)
            todo.extend((where, key, sub) for sub, _ in s.alts.values())
        elif isinstance(s, Str) and s.enum:
            found.extend((where, key, v, since) for v, since in s.enum.items() if since > 1)
        elif isinstance(s, MapOf):
            todo.append((where, key, s.values))
        elif hasattr(s, "items") and not isinstance(s, (Ref, InstrArr, TypeDesc)):
            todo.append((where, key, s.items))  # type: ignore[attr-defined]
        elif isinstance(s, InstrArr):  # the instruction scan's tables
            assert {k: v for k, v in s.roots.items() if v > 1} == versions._ROOT_V
            assert {k for k, v in s.kinds.items() if v > 1} <= set(versions._KIND_V)
    assert found
    for where, key, value, since in found:
        table = counted.get((where, key))
        assert table is not None and table.get(value) == since, (where, key, value, since)
