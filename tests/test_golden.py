"""Golden IR snapshots (seed 004 §10; issue 4 "Goldens").

* every golden compiles to exactly its committed artifact (canonical bytes)
  and digest, and regeneration would change nothing (CI fails otherwise:
  run ``python tools/regen.py`` and review the diff);
* every golden validates against its version's vendored JSON Schema, and
  against no older one;
* the independent digest of ``tests/ir_reference_digest.py``
  (``reference_digest``) agrees on every golden, and so do its RFC 8785 bytes;
* coverage: every opcode, config field, instruction op, reference root,
  implicit route, disposition, scope kind, field type, completion/switch/join
  mode, port and artifact version appears in some golden (the coverage check
  is itself tested: dropping the goldens that hold a feature makes it fail);
* annotation coverage: ``label``/``description`` at every contract place
  (nested array ``items`` included), on nodes, and ``label`` on edges;
* value coverage: CJK, emoji beyond the BMP and combining marks in
  templates, literals and annotations; control characters; the numbers
  RFC 8785 prints specially (2^53−1, negative, decimal, exponent forms).
"""
from __future__ import annotations

import json
import sys
import unicodedata
from functools import lru_cache
from pathlib import Path

import jsonschema
import pytest

from loopc.ir import surface
from loopc.ir.canonical import canonical_bytes
from loopc.ir.decoder import config_instrs, decode
from loopc.ir.verifier import verify
from loopc.ir.digest import semantic_digest
from loopc.ir.instr import children
from loopc.ir.versions import VERSIONS

from conftest import ROOT
import golden_ir as golden  # noqa: E402 - tools/, on sys.path by conftest
sys.path.insert(0, str(Path(__file__).resolve().parent))
import ir_reference_digest  # noqa: E402

CASES = list(golden.cases())
IDS = [f"{c.parent.name}/{c.name}" for c in CASES]


def _expected(case: Path) -> dict:
    return json.loads((case / "expected.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def _schema(version: int) -> jsonschema.Draft202012Validator:
    path = ROOT / "docs" / "schema" / f"loop.plan.artifact.v{version}.schema.json"
    return jsonschema.Draft202012Validator(json.loads(path.read_text(encoding="utf-8")))


def test_there_are_goldens() -> None:
    assert len(CASES) >= 25


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_golden_is_current(case: Path) -> None:
    files = golden.expected_files(case)
    exp = _expected(case)
    assert canonical_bytes(json.loads(files["expected.json"])) == canonical_bytes(exp), (
        "artifact changed; run: python tools/regen.py")
    assert files["expected.json"] == (case / "expected.json").read_bytes(), "pretty form is stale"
    assert files["digest.txt"] == (case / "digest.txt").read_bytes()


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_golden_decodes_verifies_and_matches_reference(case: Path) -> None:
    exp = _expected(case)
    raw = canonical_bytes(exp)
    art = decode(raw, canonical=True)
    assert canonical_bytes(art) == raw
    assert verify(raw).ok
    digest = (case / "digest.txt").read_text().strip()
    assert exp["digest"] == digest == semantic_digest(exp)
    assert ir_reference_digest.reference_digest(exp) == digest
    assert ir_reference_digest.jcs(exp) == raw


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_golden_validates_against_its_schema_only(case: Path) -> None:
    exp = _expected(case)
    v = int(exp["artifactVersion"].rsplit("v", 1)[1])
    errors = sorted(_schema(v).iter_errors(exp), key=lambda e: list(e.path))
    assert not errors, f"{list(errors[0].path)}: {errors[0].message}"
    if v > 1:
        older = dict(exp, artifactVersion=f"loop.plan.artifact/v{v - 1}",
                     compilerVersion=f"loop.plan.compiler/v{v - 1}")
        assert not _schema(v - 1).is_valid(older)


def test_regeneration_changes_nothing() -> None:
    writes, stale, errors = golden.plan_changes()
    assert not errors, errors
    assert not stale, stale
    assert not writes, f"would change {sorted(str(p.relative_to(ROOT)) for p in writes)}; " \
                       "run: python tools/regen.py"


def test_examples_are_mirrored() -> None:
    examples = sorted(p.stem for p in (ROOT / "examples").glob("*.yaml"))
    mirrored = sorted(p.name for p in (ROOT / "golden" / "examples").iterdir() if p.is_dir())
    assert examples == mirrored


# ---------------------------------------------------------------------------
# Coverage
# ---------------------------------------------------------------------------

def _walk_instrs(instr: list, acc: dict) -> None:
    stack = [instr]
    while stack:
        i = stack.pop()
        acc["instr_ops"].add(i[0])
        if i[0] == "ref":
            acc["roots"].add(i[2])
        acc["type_kinds"].add(i[1].replace("array<", "").rstrip(">"))
        stack.extend(children(i))


def _fields(contract: dict, acc: dict) -> None:
    for fs in contract.values():
        cur = fs
        while cur is not None:
            acc["field_types"].add(cur["type"])
            for k in cur:
                acc["field_members"].add(k)
            cur = cur.get("items")


@lru_cache(maxsize=None)
def _coverage(cases: tuple[Path, ...] = tuple(CASES)) -> dict:
    """What the goldens ``cases`` (default: all) exercise, read from their
    ``expected.json`` artifacts."""
    acc: dict = {k: set() for k in (
        "ops", "instr_ops", "roots", "config", "implicit", "dispositions", "scope_kinds",
        "field_types", "field_members", "versions", "modes", "ports", "target_ports", "type_kinds",
        "node_members", "edge_members")}
    for case in cases:
        a = _expected(case)
        acc["versions"].add(a["artifactVersion"])
        p = a["plan"]
        for c in (p["input"], p["output"], p["state"]):
            _fields(c, acc)
        for i in p["entry"]["bind"].values():
            _walk_instrs(i, acc)
        for n in p["nodes"]:
            op = n["op"]
            acc["ops"].add(op)
            acc["node_members"] |= set(n)
            _fields(n["input"], acc)
            for k, v in n["config"].items():
                acc["config"].add((op, k))
                if k == "relatedScopes":
                    acc["config"].add((op, "relatedScopes:" + v["form"]))
                if k == "workScope":
                    acc["config"].add((op, "workScope:" + v["mode"]))
                if k in ("mode", "completion", "status"):
                    acc["modes"].add((op, k, v))
            if op == "join":
                acc["modes"].add(("join", "owner", "forkId" if "forkId" in n["config"] else "fanOutId",
                                  n["config"]["mode"]))
            for key in ("callbackOutput", "result", "state"):
                if isinstance(n["config"].get(key), dict) and op in ("send_message", "join", "loop"):
                    _fields(n["config"][key], acc)
            for _, instr in config_instrs(op, n["config"]):
                _walk_instrs(instr, acc)
            for sp in n["ports"]["source"]:
                acc["ports"].add((op, sp["name"], "edge" if "edge" in sp else "implicit"))
                if "implicit" in sp:
                    acc["implicit"].add((sp["implicit"]["action"], sp["implicit"]["status"]))
                if isinstance(sp["output"], dict):
                    _fields(sp["output"], acc)
            for s in n["scope"]:
                acc["scope_kinds"].add(s["kind"])
        for e in p["edges"]:
            acc["edge_members"] |= set(e)
            acc["target_ports"].add(e["to"]["port"])
            for i in e["bind"].values():
                _walk_instrs(i, acc)
            if "disposition" in e:
                acc["dispositions"].add(e["disposition"]["action"])
        for s in p["scopes"]:
            acc["scope_kinds"].add("decl:" + s["kind"])
    return acc


def _surface_fields(obj: surface.Obj) -> set[str]:
    return set(obj.fields)


def _missing_ops(cov: dict) -> list[str]:
    """Opcodes of the IR surface (``surface.NODE_OPS``) no golden uses."""
    return sorted(set(surface.NODE_OPS) - cov["ops"])


def _missing_config_fields(cov: dict) -> list[tuple[str, str]]:
    """(opcode, config field) pairs of the IR surface (``surface.CONFIGS``,
    optional fields included) that no golden's artifact holds."""
    return sorted((op, k) for op, cfg in surface.CONFIGS.items() for k in cfg.fields
                  if (op, k) not in cov["config"])


def test_every_opcode_has_a_golden() -> None:
    assert not _missing_ops(_coverage()), _missing_ops(_coverage())
    assert _coverage()["ops"] == set(surface.NODE_OPS)


def test_every_config_field_has_a_golden() -> None:
    cov = _coverage()["config"]
    missing = _missing_config_fields(_coverage())
    assert not missing, missing
    for extra in (("send_message", "relatedScopes:list"), ("send_message", "relatedScopes:value"),
                  ("send_message", "workScope:fixed"), ("send_message", "workScope:agent")):
        assert extra in cov, extra


def test_every_instruction_op_and_root_has_a_golden() -> None:
    cov = _coverage()
    assert cov["instr_ops"] == set(surface.INSTR_OPS)
    assert cov["roots"] == set(surface.REF_ROOTS)


def test_every_field_type_and_member_has_a_golden() -> None:
    cov = _coverage()
    assert cov["field_types"] == set(surface.FIELD_TYPES)
    assert cov["field_members"] == set(surface.FIELD_SCHEMA.fields)
    assert {"node_members", "edge_members"} and cov["edge_members"] == set(surface.EDGE.fields)
    node_fields = set()
    for obj, _ in surface.NODE.variants.values():
        node_fields |= set(obj.fields)
    assert cov["node_members"] == node_fields | {"op"}


def test_every_mode_port_route_scope_and_version_has_a_golden() -> None:
    cov = _coverage()
    modes = cov["modes"]
    for m in (("send_message", "completion", "sent"), ("send_message", "completion", "callback"),
              ("switch", "mode", "first_match"), ("switch", "mode", "all_match"),
              ("join", "owner", "forkId", "all"), ("join", "owner", "forkId", "any"),
              ("join", "owner", "fanOutId", "all"), ("loop", "mode", "counted"),
              ("end", "status", "succeeded"), ("end", "status", "failed")):
        assert m in modes, m
    ports = {(op, name) for op, name, _ in cov["ports"]}
    for op, names in (("send_message", ("completed", "failed")), ("set_variable", ("completed",)),
                      ("wait", ("completed", "timed_out", "failed")),
                      ("request_approval", ("approved", "rejected", "failed")),
                      ("join", ("completed", "failed")), ("fan_out", ("item",)), ("loop", ("body", "done"))):
        for name in names:
            assert (op, name) in ports, (op, name)
    assert ("send_message", "failed", "edge") in cov["ports"] or ("request_approval", "failed", "edge") in cov["ports"]
    assert ("wait", "timed_out", "edge") in cov["ports"] and ("wait", "timed_out", "implicit") in cov["ports"]
    assert cov["target_ports"] == {"in", "continue", "break"}
    actions = {a for a, _ in cov["implicit"]}
    assert actions == set(surface.IMPLICIT_ROUTE.variants)
    assert {s for _, s in cov["implicit"]} == {"failed", "timed_out"}
    assert cov["dispositions"] == set(surface.DISPOSITION.variants)
    kinds = set(surface.SCOPE_REF.variants)
    assert kinds <= cov["scope_kinds"] and {"decl:" + k for k in kinds} <= cov["scope_kinds"]
    assert cov["versions"] == {f"loop.plan.artifact/v{v}" for v in VERSIONS}


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_version_written_is_the_version_read(case: Path) -> None:
    """The codec's two directions count the same ``since`` values: what the
    encoder writes (with the instruction scan) and what the surface walk
    reads."""
    from loopc.ir.instr import scan_instrs
    from loopc.ir.model import encode_plan, from_json, instr_roots

    exp = _expected(case)
    plan = from_json(exp).plan
    written = max(encode_plan(plan)[3], scan_instrs(instr_roots(plan))[2])
    assert written == surface.required_version(exp) == int(exp["artifactVersion"].rsplit("v", 1)[1])


@lru_cache(maxsize=None)
def _source_schema() -> jsonschema.Draft7Validator:
    path = ROOT / "docs" / "schema" / "loop.plan.source.v1.schema.json"
    return jsonschema.Draft7Validator(json.loads(path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_golden_source_validates_against_the_source_schema(case: Path) -> None:
    from ruamel.yaml import YAML

    data = YAML(typ="safe", pure=True).load((case / "source.yaml").read_text(encoding="utf-8"))
    errors = list(_source_schema().iter_errors(data))
    assert not errors, f"{list(errors[0].path)}: {errors[0].message}"


def test_source_schema_rejects_structural_mistakes() -> None:
    v = _source_schema()
    base = {"apiVersion": "loop.plan/v1", "kind": "PlanVersion", "input": {}, "output": {}, "entry": "done",
            "nodes": [{"id": "done", "type": "end", "end": {"status": "succeeded"}}], "edges": []}
    assert v.is_valid(base)
    for bad in (
        dict(base, trigger={}),
        dict(base, nodes=[{"id": "done", "type": "end", "sendMessage": {}}]),
        dict(base, nodes=[{"id": "done", "type": "end", "end": {"status": "succeeded"}, "retry": {}}]),
        dict(base, input={"a": {"type": "enum"}}),
        dict(base, input={"Bad": {"type": "string"}}),
    ):
        assert not v.is_valid(bad), bad


def test_coverage_check_fails_when_a_feature_loses_its_goldens() -> None:
    """The opcode/config-field coverage tests are real: with the goldens that
    hold an opcode (or config field) left out, the check reports it missing."""
    per_case = {case: _coverage((case,)) for case in CASES}
    for op in surface.NODE_OPS:
        rest = tuple(c for c in CASES if op not in per_case[c]["ops"])
        assert len(rest) < len(CASES)
        assert op in _missing_ops(_coverage(rest)), op
    for op, cfg in surface.CONFIGS.items():
        for k in cfg.fields:
            rest = tuple(c for c in CASES if (op, k) not in per_case[c]["config"])
            assert len(rest) < len(CASES), (op, k)
            assert (op, k) in _missing_config_fields(_coverage(rest)), (op, k)


# ---------------------------------------------------------------------------
# Annotation and value coverage (what the semantic digest must get right)
# ---------------------------------------------------------------------------

_ANNOTATIONS = ("label", "description")


def _annotation_places(a: dict) -> set[tuple[str, str]]:
    """(place, annotation) pairs present in an artifact.  Places: ``plan.input``,
    ``plan.output``, ``plan.state``, ``node.input``, ``port.output``,
    ``send_message.callbackOutput``, ``join.result``, ``loop.state`` (top-level
    FieldSchemas), ``items`` / ``items.items`` (FieldSchemas nested one / two
    levels below a field), ``node``, ``edge``."""
    found: set[tuple[str, str]] = set()

    def contract(place: str, c: dict) -> None:
        for fs in c.values():
            depth, cur = 0, fs
            while isinstance(cur, dict):
                where = place if depth == 0 else ".".join(["items"] * min(depth, 2))
                found.update((where, k) for k in _ANNOTATIONS if k in cur)
                cur, depth = cur.get("items"), depth + 1

    p = a["plan"]
    for k in ("input", "output", "state"):
        contract("plan." + k, p[k])
    for n in p["nodes"]:
        found.update(("node", k) for k in _ANNOTATIONS if k in n)
        contract("node.input", n["input"])
        for sp in n["ports"]["source"]:
            if isinstance(sp["output"], dict):
                contract("port.output", sp["output"])
        key = {"send_message": "callbackOutput", "join": "result", "loop": "state"}.get(n["op"])
        if key and key in n["config"]:
            contract(f"{n['op']}.{key}", n["config"][key])
    for e in p["edges"]:
        found.update(("edge", k) for k in _ANNOTATIONS if k in e)
    return found


def test_annotations_at_every_contract_place_have_a_golden() -> None:
    found: set[tuple[str, str]] = set()
    for case in CASES:
        found |= _annotation_places(_expected(case))
    places = ("plan.input", "plan.output", "plan.state", "node.input", "port.output",
              "send_message.callbackOutput", "join.result", "loop.state", "items", "items.items", "node")
    missing = sorted({(p, k) for p in places for k in _ANNOTATIONS} - found)
    assert not missing, missing
    assert ("edge", "label") in found
    assert ("edge", "description") not in found  # edges carry no description (closed surface)


def _values(a: dict) -> dict[str, list]:
    """Strings and numbers of an artifact by kind: ``template`` (text
    segments of template instructions), ``literal`` (inside other ``lit``
    values, object keys included), ``default`` (inside FieldSchema defaults
    and enum values), ``annotation`` (labels and descriptions)."""
    out: dict[str, list] = {"template": [], "literal": [], "default": [], "annotation": []}

    def data(kind: str, v: object) -> None:
        stack = [v]
        while stack:
            x = stack.pop()
            if isinstance(x, dict):
                out[kind].extend(x)
                stack.extend(x.values())
            elif isinstance(x, list):
                stack.extend(x)
            elif not isinstance(x, bool) and x is not None:
                out[kind].append(x)

    def instr(i: list) -> None:
        stack = [i]
        while stack:
            cur = stack.pop()
            if cur[0] == "template":
                for part in cur[2:]:
                    if part[0] == "lit":
                        data("template", part[2])
                    else:
                        stack.append(part)
            elif cur[0] == "lit":
                data("literal", cur[2])
            else:
                stack.extend(children(cur))

    def contract(c: dict) -> None:
        for fs in c.values():
            cur = fs
            while isinstance(cur, dict):
                data("default", cur.get("default"))
                data("default", cur.get("values"))
                out["annotation"].extend(cur[k] for k in _ANNOTATIONS if k in cur)
                cur = cur.get("items")

    p = a["plan"]
    for k in ("input", "output", "state"):
        contract(p[k])
    for n in p["nodes"]:
        out["annotation"].extend(n[k] for k in _ANNOTATIONS if k in n)
        contract(n["input"])
        for key in ("callbackOutput", "result", "state"):
            if isinstance(n["config"].get(key), dict):
                contract(n["config"][key])
    for e in p["edges"]:
        out["annotation"].extend(e[k] for k in _ANNOTATIONS if k in e)
    from loopc.ir.decoder import iter_instr_roots

    for _, _, i in iter_instr_roots(a):
        instr(i)
    return out


@lru_cache(maxsize=None)
def _all_values() -> dict[str, list]:
    acc: dict[str, list] = {}
    for case in CASES:
        for k, v in _values(_expected(case)).items():
            acc.setdefault(k, []).extend(v)
    return acc


def _has_cjk(s: str) -> bool:
    return any("\u4e00" <= c <= "\u9fff" or "\u3040" <= c <= "\u30ff" for c in s)


def _has_astral(s: str) -> bool:
    return any(ord(c) > 0xFFFF for c in s)


def _has_combining(s: str) -> bool:
    return any(unicodedata.combining(c) for c in s)


def test_non_ascii_strings_have_goldens() -> None:
    vals = _all_values()
    for kind in ("template", "literal", "annotation"):
        strings = [s for s in vals[kind] if isinstance(s, str)]
        for name, pred in (("CJK", _has_cjk), ("emoji beyond the BMP", _has_astral),
                           ("combining mark", _has_combining)):
            assert any(pred(s) for s in strings), f"no golden has a {name} in a {kind} string"
    keys = [s for s in vals["literal"] if isinstance(s, str)]
    # object keys whose UTF-16 order differs from code-point order (RFC 8785 key sort)
    assert any(_has_astral(s) for s in keys) and any("\ue000" <= c for s in keys for c in s if ord(c) <= 0xFFFF)


def test_control_characters_have_goldens() -> None:
    text = "".join(s for kind in ("template", "literal", "default") for s in _all_values()[kind]
                   if isinstance(s, str))
    for c in '\b\f\n\r\t"\\':  # the short escapes
        assert c in text, repr(c)
    others = {c for c in text if c < " " and c not in "\b\f\n\r\t"}
    assert {"\x00", "\x1f"} <= others, others  # \u0000 … \u001f, lowercase hex
    assert "\x7f" in text and "\u2028" in text  # not escaped by RFC 8785
    tmpl = "".join(s for s in _all_values()["template"] if isinstance(s, str))
    assert any(c < " " for c in tmpl)


def test_special_numbers_have_goldens() -> None:
    vals = _all_values()
    wanted = (2**53 - 1, -(2**53 - 1), 0.1, 1e-7, -2.5)
    for kind in ("literal", "default"):
        nums = [x for x in vals[kind] if isinstance(x, (int, float))]
        for w in wanted:
            assert any(x == w and type(x) is type(w) for x in nums), (kind, w)
    nums = [x for x in vals["literal"] if isinstance(x, (int, float))]
    assert any(x == 1e21 for x in nums) and any(isinstance(x, float) and x < 1e-300 for x in nums)
