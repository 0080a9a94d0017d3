"""The node-kind registry (src/loopc/kinds/) is the one source of truth: the
checker, the published schemas, the artifact surface and the port tables all
read it, and the generated files are current."""

from __future__ import annotations

import itertools
import json

import jsonschema
import pytest

from loopc import value
import loopc
from loopc import kinds
from loopc.compiler import model, ports, schema
from loopc.ir import source_schema, surface
from loopc.ir.versions import LATEST, VERSIONS
from loopc.kinds.spec import INSTR

from conftest import ROOT
import golden_ir as golden  # tools/, on sys.path by conftest


def test_every_kind_has_a_module_and_one_entry() -> None:
    mods = {p.stem for p in (ROOT / "src" / "loopc" / "kinds").glob("*.py")} - {
        "__init__",
        "__main__",
        "base",
        "spec",
        "docs",
    }
    assert mods == set(kinds.KINDS)
    assert list(model.NODE_CONFIG_KEYS) == list(kinds.KINDS)
    assert set(surface.CONFIGS) == set(surface.NODE_OPS) == set(kinds.KINDS)


def test_checker_tables_come_from_the_registry() -> None:
    assert schema.SEND_KEYS == kinds.KINDS["send_message"].source_keys
    assert schema.JOIN_KEYS == kinds.KINDS["join"].source_keys
    assert schema.MAX_CONCURRENCY == kinds.MAX_CONCURRENCY == kinds.KINDS["fan_out"].bounds("maxConcurrency")[1]
    assert schema.MAX_ITERATIONS == kinds.KINDS["loop"].bounds("iterations")[1]
    assert model.RETRY_CAPABLE == kinds.RETRY_CAPABLE == {"send_message", "wait", "request_approval"}


def _schema_of(doc: dict, *path: str) -> dict:
    for p in path:
        doc = doc[p]
    return doc


def test_bounds_are_declared_once() -> None:
    """The checker, the source schema and every artifact schema carry the
    registry's bounds."""
    src = source_schema.source_schema()["definitions"]["Node"]["properties"]
    assert src["fanOut"]["properties"]["maxConcurrency"]["maximum"] == kinds.MAX_CONCURRENCY
    assert src["loop"]["properties"]["iterations"]["maximum"] == kinds.MAX_ITERATIONS
    assert src["retry"]["properties"]["maxAttempts"]["maximum"] == kinds.MAX_ATTEMPTS
    for v in VERSIONS:
        defs = surface.json_schema(v)["$defs"]
        assert defs["Config_loop"]["properties"]["iterations"]["maximum"] == kinds.MAX_ITERATIONS
        assert defs["Retry"]["properties"]["maxAttempts"]["maximum"] == kinds.MAX_ATTEMPTS
        if v >= 4:
            assert defs["Config_fan_out"]["properties"]["maxConcurrency"]["maximum"] == kinds.MAX_CONCURRENCY
    res = loopc.check_source(
        "apiVersion: loop.plan/v1\nkind: PlanVersion\ninput: {}\noutput: {}\nentry: l\nnodes:\n"
        f"  - {{id: l, type: loop, loop: {{mode: counted, iterations: {kinds.MAX_ITERATIONS + 1}}}}}\n"
        "edges: []\n"
    )
    assert any(d.code == "LP2016" and f"{kinds.MAX_ITERATIONS:,}" in d.message for d in res.diagnostics)


def test_source_schema_config_keys_match_the_checker() -> None:
    props = source_schema.source_schema()["definitions"]["Node"]["properties"]
    for k in kinds.KINDS.values():
        cfg = props[k.config_key]
        assert set(cfg["properties"]) == k.source_keys, k.name
        assert set(cfg.get("required", ())) == set(k.required_source_keys), k.name


def test_generated_reference_files_are_current() -> None:
    for path, data in {**golden.schema_files(), **golden.node_kinds_page()}.items():
        assert path.read_bytes() == data, f"{path.relative_to(ROOT)} is stale: run python tools/regen.py"


def _golden_artifacts() -> list[dict]:
    return [json.loads(p.read_text("utf-8")) for p in sorted(ROOT.glob("golden/*/*/expected.json"))]


def test_wire_ports_and_instruction_positions_agree_with_the_goldens() -> None:
    seen = set()
    for art in _golden_artifacts():
        for n in art["plan"]["nodes"]:
            seen.add(n["op"])
            assert kinds.wire_source_ports(n["op"], n["config"]) == [p["name"] for p in n["ports"]["source"]]
            assert [p["name"] for p in n["ports"]["target"]] == list(kinds.KINDS[n["op"]].ports.targets)
            for ptr, instr in kinds.config_instrs(n["op"], n["config"]):
                cur = n["config"]
                for seg in ptr.split("/")[1:]:
                    seg = seg.replace("~1", "/").replace("~0", "~")
                    cur = cur[int(seg)] if isinstance(cur, list) else cur[seg]
                assert cur is instr
    assert seen == set(kinds.KINDS)


def test_model_ports_agree_with_wire_ports() -> None:
    for p in sorted(ROOT.glob("golden/*/*/source.yaml")):
        res = loopc.compile_source(p.read_bytes())
        assert res.ok
        by_id = {n["id"]: n for n in json.loads(res.bytes)["plan"]["nodes"]}
        for nid, node in res.check.plan.nodes.items():
            wire = by_id[nid]
            assert list(ports.source_ports(node)) == kinds.wire_source_ports(wire["op"], wire["config"])


def _sample(spec: object) -> object:
    """A small valid wire value of ``spec`` (for the cross-field rule tests)."""
    if spec == INSTR:
        return ["lit", "string", "x"]
    if isinstance(spec, surface.Ref):
        return {"Contract": {}, "FieldSchema": {"type": "string", "required": True}}.get(spec.name, {})
    if isinstance(spec, surface.Str):
        if spec.enum:
            return next(iter(spec.enum))
        return "review_rejected" if spec.pattern and "." in spec.pattern else "abc"
    if isinstance(spec, surface.Int):
        return spec.minimum or 1
    if isinstance(spec, surface.Bool):
        return True if spec.const is None else spec.const
    if isinstance(spec, surface.Arr):
        return [_sample(spec.items) for _ in range(max(spec.min_items, 1))]
    if isinstance(spec, surface.MapOf):
        return {"a": _sample(spec.values)}
    if isinstance(spec, surface.Obj):
        return {k: _sample(f.spec) for k, f in spec.fields.items() if f.required}
    if isinstance(spec, surface.Tagged):
        tag, (obj, _) = next(iter(spec.variants.items()))
        return {spec.tag: tag, **{k: _sample(f.spec) for k, f in obj.fields.items()}}
    raise AssertionError(spec)


@pytest.mark.parametrize("op", sorted(kinds.KINDS))
def test_cross_field_rules_agree_with_their_json_schema(op: str) -> None:
    """Each wire config's Python checks and its JSON Schema accept exactly the
    same field combinations (every subset of the optional fields, every
    value of every enum field)."""
    k = kinds.KINDS[op]
    obj = k.wire
    schema_doc = surface.json_schema(LATEST)
    validator = jsonschema.Draft202012Validator(
        {"$defs": schema_doc["$defs"], "$ref": f"#/$defs/{surface.CONFIG_NAMES[op]}"}
    )
    base = _sample(obj)
    assert isinstance(base, dict)
    optional = [name for name, f in obj.fields.items() if not f.required]
    enums = {
        name: list(f.spec.enum)
        for name, f in obj.fields.items()
        if isinstance(f.spec, surface.Str) and f.spec.enum and len(f.spec.enum) > 1
    }
    checked = 0
    for r in range(len(optional) + 1):
        for subset in itertools.combinations(optional, r):
            for values in itertools.product(*enums.values()):
                d = {k2: v for k2, v in base.items() if k2 not in optional}
                d.update({name: _sample(obj.fields[name].spec) for name in subset})
                d.update(dict(zip(enums, values)))
                by_checks = all(pred(d) for _, pred in obj.checks)
                by_schema = validator.is_valid(d)
                assert by_checks == by_schema, (op, d)
                checked += 1
    assert checked >= 1


# ---------------------------------------------------------------------------
# Generic fields (docs/architecture.md#add-one-field-to-one-node-kind)
# ---------------------------------------------------------------------------

#: custom source fields whose model attributes are not the key's attr_name
_CUSTOM_ATTRS = {("send_message", "workItems"): ("allowed_responders", "has_work_items")}


@pytest.mark.parametrize("name", list(kinds.KINDS))
def test_every_source_field_has_its_model_attribute_and_wire_member(name: str) -> None:
    """Generic fields are derived on the model class and the IR config class
    under attr_name(key), with the same wire name; custom ones are declared
    there by hand under the same names (one documented exception)."""
    import attrs

    from loopc.ir import model as ir_model
    from loopc.kinds.base import attr_name

    k = kinds.KINDS[name]
    cls = model.CONFIG_CLASSES[name]
    fields = {f.name: f for f in value.fields(cls)}
    ir_fields = {a.name: a.metadata["wire"] for a in attrs.fields(ir_model.CONFIG_CLASSES[name])}
    for key, f in k.source.items():
        attr = attr_name(key)
        assert attr.replace("_", "").lower() == key.lower()
        assert "".join(p.capitalize() if i else p for i, p in enumerate(attr.split("_"))) == key
        for a in _CUSTOM_ATTRS.get((name, key), (attr,)):
            assert a in fields, (name, key)
        if f.generic:
            assert ir_fields.get(attr) == key, (name, key)  # lowered under its own name
            if f.required:
                assert fields[attr].default is value.NOTHING, (name, key)
            if f.form == "literal":
                assert key in k.wire.fields
        else:
            assert f.custom or f.form not in ("template", "expression", "value"), (name, key)
    assert set(ir_fields.values()) == set(k.wire.fields)
    assert list(model.CONFIG_CLASSES) == list(kinds.KINDS)


def test_generic_fields_declare_a_known_type() -> None:
    from loopc.compiler.typecheck_nodes import type_named

    for k in kinds.KINDS.values():
        for _key, _attr, f in k.generic_fields:
            if f.form != "literal":
                type_named(f.type)  # KeyError for a name the type pass does not know


def test_versions_are_derived_without_gaps() -> None:
    """Every artifact version 1..LATEST is introduced by something the
    registry (or versions.py) declares: VERSIONS is derived from them."""
    from loopc.ir import versions

    used = {k.since for k in kinds.KINDS.values()} | set(kinds.spec.FIELD_TYPES.values())
    for k in kinds.KINDS.values():
        for f in k.wire.fields.values():
            used.add(versions._newest(f))
    used |= set(versions._ROOT_V.values()) | set(versions._ACTION_V.values())
    assert VERSIONS == tuple(range(1, LATEST + 1)) == tuple(sorted(used))
