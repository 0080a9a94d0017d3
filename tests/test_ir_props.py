"""Property tests of the artifact contract (issue 4 "Tests"):

* compile → decode → canonical bytes is the identity;
* mutating a semantic value of an artifact changes its digest, and
  ``verify`` rejects the stale digest;
* mutating a label/description changes neither validity nor digest;
* reformatting the source (key order, flow/block style, quoting, comments,
  node/edge order, labels) never changes the digest, and changing an
  executable value does;
* compiling under two ``PYTHONHASHSEED`` values is byte-identical.
"""
from __future__ import annotations

import copy
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopc.ir import decode, verify
from loopc.pipeline import compile_source
from loopc.ir.canonical import canonical_bytes
from loopc.ir.digest import semantic_digest, semantic_projection

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import ROOT
SOURCES = sorted((ROOT / "golden").glob("*/*/source.yaml"))
IDS = [f"{p.parent.parent.name}/{p.parent.name}" for p in SOURCES]
_COMPILED: dict[Path, Any] = {}

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def compiled(path: Path) -> Any:
    if path not in _COMPILED:
        res = compile_source(path.read_bytes())
        assert res.ok, (path, [(d.code, d.message) for d in res.diagnostics])
        _COMPILED[path] = res
    return _COMPILED[path]


def load_yaml(path: Path) -> Any:
    from ruamel.yaml import YAML

    return YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------
# A random but faithful YAML emitter (for the reformatting property)
# ---------------------------------------------------------------------------

_PLAIN_OK = set("abcdefghijklmnopqrstuvwxyz_0123456789")


def _scalar(v: Any, rnd: random.Random) -> str:
    if v is None:
        return rnd.choice(["null", "~", "Null"])
    if v is True:
        return rnd.choice(["true", "True"])
    if v is False:
        return rnd.choice(["false", "FALSE"])
    if isinstance(v, (int, float)):
        return json.dumps(v)
    assert isinstance(v, str)
    styles = ["double"]
    if "\n" not in v and all(ord(c) >= 0x20 for c in v) and v == v.strip():
        styles.append("single")
    if v and v[0].isalpha() and v[0].islower() and set(v) <= _PLAIN_OK and v not in ("true", "false", "null"):
        styles.append("plain")
    if any(c in v for c in "\u2028\u2029\x85\ufeff") or any(ord(c) > 0x7e for c in v):
        styles = [x for x in styles if x != "single"]
    style = rnd.choice(styles)
    if style == "plain":
        return v
    if style == "single":
        return "'" + v.replace("'", "''") + "'"
    return _double(v, ascii_only=rnd.random() < 0.5)


def _double(v: str, *, ascii_only: bool) -> str:
    """A YAML double-quoted scalar (escapes as YAML defines them; libyaml's
    line-break characters U+0085/U+2028/U+2029 are always escaped)."""
    out = ['"']
    for c in v:
        o = ord(c)
        if c == '"' or c == "\\":
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif o < 0x20 or o == 0x7f or c in "\x85\u2028\u2029\ufeff" or (ascii_only and o > 0x7e):
            out.append(f"\\u{o:04x}" if o <= 0xFFFF else f"\\U{o:08x}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def _flow(v: Any, rnd: random.Random) -> str:
    if isinstance(v, dict):
        items = list(v.items())
        rnd.shuffle(items)
        return "{" + ", ".join(f"{_scalar(k, rnd)}: {_flow(x, rnd)}" for k, x in items) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_flow(x, rnd) for x in v) + "]"
    return _scalar(v, rnd)


def _block(v: Any, indent: int, rnd: random.Random, out: list[str], *, shuffle_lists: bool = False) -> None:
    pad = " " * indent
    if isinstance(v, dict):
        items = list(v.items())
        rnd.shuffle(items)
        for k, x in items:
            if rnd.random() < 0.15:
                out.append(f"{pad}# comment {rnd.randint(0, 999)}")
            key = _scalar(k, rnd)
            if isinstance(x, (dict, list)) and x and rnd.random() < 0.6:
                out.append(f"{pad}{key}:")
                _block(x, indent + 2, rnd, out, shuffle_lists=k in ("nodes", "edges") and indent == 0)
            else:
                out.append(f"{pad}{key}: {_flow(x, rnd)}")
    elif isinstance(v, list):
        items = list(v)
        if shuffle_lists:
            rnd.shuffle(items)
        for x in items:
            if isinstance(x, dict) and x and rnd.random() < 0.7:
                sub: list[str] = []
                _block(x, indent + 2, rnd, sub)
                first = sub[0].lstrip()
                while first.startswith("#"):
                    sub.pop(0)
                    first = sub[0].lstrip()
                out.append(f"{pad}- {first}")
                out.extend(sub[1:])
            else:
                out.append(f"{pad}- {_flow(x, rnd)}")
    else:
        out.append(pad + _scalar(v, rnd))


def reformat(data: dict, rnd: random.Random) -> str:
    body = {k: v for k, v in data.items() if k not in ("apiVersion", "kind")}
    out = ["apiVersion: loop.plan/v1", "kind: PlanVersion"]
    if rnd.random() < 0.5:
        out.append("# reformatted by test_ir_props")
    _block(body, 0, rnd, out)
    return "\n".join(out) + "\n"


def relabel(data: Any, rnd: random.Random) -> Any:
    """Change every node/edge/FieldSchema label and description (add some)."""
    data = copy.deepcopy(data)

    def fields(contract: Any) -> None:
        if isinstance(contract, dict):
            for fs in contract.values():
                cur = fs
                while isinstance(cur, dict):
                    if rnd.random() < 0.5:
                        cur["label"] = f"Label {rnd.randint(0, 99)} é"
                    if rnd.random() < 0.3:
                        cur["description"] = "Some\nmulti-line 'text'"
                    cur = cur.get("items")

    for k in ("input", "output", "state"):
        fields(data.get(k))
    for n in data.get("nodes", []):
        n["label"] = f"Node {rnd.randint(0, 99)}"
        if rnd.random() < 0.5:
            n["description"] = "Does \"things\""
        fields(n.get("input"))
        for cfg_key in ("sendMessage", "join", "loop"):
            cfg = n.get(cfg_key)
            if isinstance(cfg, dict):
                fields(cfg.get("callbackOutput") or cfg.get("result") or cfg.get("state"))
    for e in data.get("edges", []):
        e["label"] = f"edge {rnd.randint(0, 99)}"
    return data


def unlabel(data: Any) -> tuple[Any, int]:
    """Remove every authored annotation — node and edge ``label``/``description``,
    FieldSchema ``label``/``description`` in every contract (nested ``items``
    included) — and return (plan, number removed)."""
    data = copy.deepcopy(data)
    removed = 0

    def strip(obj: Any) -> None:
        nonlocal removed
        if isinstance(obj, dict):
            for k in ("label", "description"):
                if k in obj:
                    del obj[k]
                    removed += 1

    def fields(contract: Any) -> None:
        if isinstance(contract, dict):
            for fs in contract.values():
                while isinstance(fs, dict):
                    strip(fs)
                    fs = fs.get("items")

    for k in ("input", "output", "state"):
        fields(data.get(k))
    for n in data.get("nodes", []):
        strip(n)
        fields(n.get("input"))
        for cfg_key, contract_key in (("sendMessage", "callbackOutput"), ("join", "result"), ("loop", "state")):
            if isinstance(n.get(cfg_key), dict):
                fields(n[cfg_key].get(contract_key))
    for e in data.get("edges", []):
        strip(e)
    return data, removed


# ---------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("path", SOURCES, ids=IDS)
def test_removing_every_annotation_keeps_the_digest(path: Path) -> None:
    """Deterministic companion of the relabelling property, on every golden:
    a source without any label/description has the golden's digest (and, when
    the golden had annotations, different artifact bytes)."""
    data, removed = unlabel(load_yaml(path))
    res = compile_source(reformat(data, random.Random(0)))
    assert res.ok, [(d.code, d.span.line, d.message) for d in res.diagnostics]
    assert res.digest == compiled(path).digest
    assert (res.bytes != compiled(path).bytes) == (removed > 0)


@SETTINGS
@given(st.sampled_from(SOURCES), st.integers(0, 2**32 - 1))
def test_reformatting_never_changes_the_digest(path: Path, seed: int) -> None:
    rnd = random.Random(seed)
    data = relabel(load_yaml(path), rnd) if rnd.random() < 0.7 else load_yaml(path)
    text = reformat(data, rnd)
    res = compile_source(text)
    assert res.ok, (text, [(d.code, d.span.line, d.message) for d in res.diagnostics])
    assert res.digest == compiled(path).digest, text


_EXEC_KEYS = ("text", "summary", "detail")


def _exec_mutations(data: Any) -> list[tuple[list[Any], Any]]:
    """(path, new value) pairs that change an executable value and keep the plan valid."""
    out: list[tuple[list[Any], Any]] = []
    for i, n in enumerate(data.get("nodes", [])):
        for key in ("sendMessage", "requestApproval", "end"):
            cfg = n.get(key)
            if not isinstance(cfg, dict):
                continue
            for k in _EXEC_KEYS:
                if isinstance(cfg.get(k), str):
                    out.append((["nodes", i, key, k], cfg[k] + " !"))
        if isinstance(n.get("loop"), dict):
            it = n["loop"]["iterations"]
            out.append((["nodes", i, "loop", "iterations"], it + 1 if it < 10000 else it - 1))
        if isinstance(n.get("retry"), dict):
            out.append((["nodes", i, "retry", "backoff"], "PT60S" if n["retry"]["backoff"] == "PT1M" else "PT1M"))
        if n.get("type") in ("send_message", "wait", "request_approval") and "retry" not in n:
            out.append((["nodes", i, "retry"], {"maxAttempts": 2, "backoff": "PT1S"}))
        if isinstance(n.get("fanOut"), dict):
            mc = n["fanOut"].get("maxConcurrency", 4)
            out.append((["nodes", i, "fanOut", "maxConcurrency"], 5 if mc == 4 else 4))
    return out


@SETTINGS
@given(st.sampled_from(SOURCES), st.integers(0, 2**32 - 1))
def test_changing_an_executable_value_changes_the_digest(path: Path, seed: int) -> None:
    rnd = random.Random(seed)
    data = load_yaml(path)
    muts = _exec_mutations(data)
    if not muts:
        return
    where, value = rnd.choice(muts)
    cur = data
    for k in where[:-1]:
        cur = cur[k]
    cur[where[-1]] = value
    res = compile_source(reformat(data, rnd))
    assert res.ok, (where, [(d.code, d.message) for d in res.diagnostics])
    assert res.digest != compiled(path).digest, where


def test_retry_backoff_is_verbatim() -> None:
    """``PT60S`` and ``PT1M`` are different artifacts (durations verbatim)."""
    src = (ROOT / "golden/wait/condition_timeout/source.yaml").read_text()
    a = compile_source(src)
    b = compile_source(src.replace("backoff: PT1M", "backoff: PT60S"))
    assert a.ok and b.ok and a.digest != b.digest


@SETTINGS
@given(st.sampled_from(SOURCES))
def test_compile_decode_canonical_identity(path: Path) -> None:
    raw = compiled(path).bytes
    art = decode(raw, canonical=True)
    assert canonical_bytes(art) == raw
    assert canonical_bytes(decode(json.dumps(json.loads(raw), indent=1))) == raw


def _leaves(v: Any, path: list[Any], out: list[list[Any]], *, annotations: bool) -> None:
    """Paths of scalar leaves of the projection (``annotations`` false) or of
    annotation members (``annotations`` true)."""
    stack = [(v, path)]
    while stack:
        x, p = stack.pop()
        if isinstance(x, dict):
            for k, y in x.items():
                stack.append((y, p + [k]))
        elif isinstance(x, list):
            for i, y in enumerate(x):
                stack.append((y, p + [i]))
        else:
            out.append(p)


def _set(obj: Any, path: list[Any], value: Any) -> None:
    for k in path[:-1]:
        obj = obj[k]
    obj[path[-1]] = value


def _get(obj: Any, path: list[Any]) -> Any:
    for k in path:
        obj = obj[k]
    return obj


def _mutated(v: Any) -> Any:
    if isinstance(v, bool):
        return not v
    if isinstance(v, (int, float)):
        return v + 1
    if isinstance(v, str):
        return v + "x"
    return 0  # null → 0


@SETTINGS
@given(st.sampled_from(SOURCES), st.integers(0, 2**32 - 1))
def test_semantic_mutation_changes_digest_and_verify_rejects(path: Path, seed: int) -> None:
    rnd = random.Random(seed)
    art = json.loads(compiled(path).bytes)
    proj = semantic_projection(art)
    leaves: list[list[Any]] = []
    _leaves(proj, [], leaves, annotations=False)
    where = rnd.choice(leaves)
    mutated = copy.deepcopy(art)
    _set(mutated["plan"], where, _mutated(_get(art["plan"], where)))
    assert semantic_digest(mutated) != art["digest"], where
    res = verify(canonical_bytes(mutated))
    assert not res.ok, where


@SETTINGS
@given(st.sampled_from(SOURCES), st.integers(0, 2**32 - 1), st.text(max_size=20))
def test_annotation_mutation_keeps_validity_and_digest(path: Path, seed: int, text: str) -> None:
    rnd = random.Random(seed)
    art = json.loads(compiled(path).bytes)
    plan = art["plan"]
    targets: list[tuple[dict, str]] = []

    def contract(c: dict) -> None:  # every FieldSchema, nested array items included
        for fs in c.values():
            while isinstance(fs, dict):
                targets.extend([(fs, "label"), (fs, "description")])
                fs = fs.get("items")

    for n in plan["nodes"]:
        targets += [(n, "label"), (n, "description")]
        contract(n["input"])
        for sp in n["ports"]["source"]:
            if isinstance(sp["output"], dict):
                contract(sp["output"])
        key = {"send_message": "callbackOutput", "join": "result", "loop": "state"}.get(n["op"])
        if key and key in n["config"]:
            contract(n["config"][key])
    for e in plan["edges"]:
        targets.append((e, "label"))
    for c in (plan["input"], plan["output"], plan["state"]):
        contract(c)
    obj, key = rnd.choice(targets)
    if key in obj and rnd.random() < 0.3:
        del obj[key]
    else:
        obj[key] = text
    raw = canonical_bytes(art)
    res = verify(raw)
    assert res.ok, res.message
    assert semantic_digest(art) == compiled(path).digest


@pytest.mark.slow
def test_two_hash_seeds_are_byte_identical(tmp_path: Path) -> None:
    script = (
        "import sys, hashlib\n"
        "from loopc.pipeline import compile_source\n"
        "h = hashlib.sha256()\n"
        "for p in sys.argv[1:]:\n"
        "    r = compile_source(open(p, 'rb').read())\n"
        "    assert r.ok, p\n"
        "    h.update(r.bytes)\n"
        "print(h.hexdigest())\n"
    )
    outs = []
    for seed in ("0", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=str(ROOT))
        r = subprocess.run([sys.executable, "-c", script, *map(str, SOURCES)], capture_output=True,
                           text=True, env=env, cwd=str(ROOT), timeout=120)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout)
    assert outs[0] == outs[1]


# ---------------------------------------------------------------------------
# Generated plans: arbitrary text, numbers, defaults and labels
# ---------------------------------------------------------------------------

_TEXT = st.text(st.characters(whitelist_categories=("L", "N", "P", "S", "Zs"), blacklist_characters="{}\\")
                | st.sampled_from(["\n", "\t", "\"", "'", "😀", "\u2028"]), max_size=30)
_IDENT = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True).filter(
    lambda s: s not in ("true", "false", "null"))
_JSON_SCALAR = (st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1)
                | st.floats(allow_nan=False, allow_infinity=False, width=64) | _TEXT)
_JSON = st.recursive(_JSON_SCALAR, lambda kids: st.lists(kids, max_size=3)
                     | st.dictionaries(_TEXT, kids, max_size=3), max_leaves=8)


@st.composite
def field_schemas(draw: Any) -> dict:
    kind = draw(st.sampled_from(["string", "number", "boolean", "object", "array", "enum", "duration"]))
    fs: dict[str, Any] = {"type": kind}
    if draw(st.booleans()):
        fs["required"] = draw(st.booleans())
    default: Any = None
    if kind == "string":
        default = draw(_TEXT)
    elif kind == "number":
        default = draw(st.integers(-(2**53) + 1, 2**53 - 1) | st.floats(allow_nan=False, allow_infinity=False))
    elif kind == "boolean":
        default = draw(st.booleans())
    elif kind == "object":
        default = draw(st.dictionaries(_TEXT, _JSON, max_size=3))
    elif kind == "array":
        fs["items"] = {"type": "string", "required": True}
        default = draw(st.lists(_TEXT, max_size=3))
    elif kind == "enum":
        fs["values"] = draw(st.lists(_IDENT, min_size=1, max_size=3, unique=True))
        default = draw(st.sampled_from(fs["values"]))
    elif kind == "duration":
        default = draw(st.sampled_from(["PT1S", "PT60S", "PT1M", "P1DT2H", "PT0.5S"]))
    if draw(st.booleans()):
        fs["default"] = default
    if draw(st.booleans()):
        fs["label"] = draw(_TEXT)
    if draw(st.booleans()):
        fs["description"] = draw(_TEXT)
    return fs


@st.composite
def generated_plans(draw: Any) -> dict:
    inputs = draw(st.dictionaries(_IDENT, field_schemas(), max_size=4))
    state = draw(st.dictionaries(_IDENT, field_schemas(), max_size=2))
    for fs in state.values():
        if "default" not in fs:
            fs["default"] = {"string": "", "number": 0, "boolean": False, "object": {}, "array": [],
                             "duration": "PT1S"}.get(fs["type"], fs.get("values", [""])[0])
    n = draw(st.integers(1, 4))
    nodes: list[dict] = []
    edges: list[dict] = []
    ids = draw(st.lists(_IDENT, min_size=n + 1, max_size=n + 1, unique=True))
    for i in range(n):
        node: dict[str, Any] = {"id": ids[i], "type": "send_message",
                                "sendMessage": {"target": f"#c{i}", "text": draw(_TEXT) or "x",
                                                "completion": "sent"}}
        if draw(st.booleans()):
            node["label"] = draw(_TEXT)
        if draw(st.booleans()):
            node["retry"] = {"maxAttempts": draw(st.integers(1, 100)),
                             "backoff": draw(st.sampled_from(["PT1S", "PT30S", "P1D"]))}
        nodes.append(node)
        edges.append({"id": f"e{i}", "from": {"node": ids[i], "port": "completed"},
                      "to": {"node": ids[i + 1]}, "label": draw(_TEXT)})
    nodes.append({"id": ids[n], "type": "end", "end": {"status": "succeeded"}})
    plan = {"apiVersion": "loop.plan/v1", "kind": "PlanVersion", "input": inputs, "output": {},
            "entry": ids[0], "nodes": nodes, "edges": edges}
    if state:
        plan["state"] = state
    return plan


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(generated_plans(), st.integers(0, 2**32 - 1))
def test_generated_plans_round_trip(plan: dict, seed: int) -> None:
    import ir_reference_digest

    text = reformat(plan, random.Random(seed))
    res = compile_source(text)
    if not res.ok:  # the generator stays inside the language; report what rejected it
        raise AssertionError((text, [(d.code, d.span.line, d.message) for d in res.diagnostics]))
    art = decode(res.bytes, canonical=True)
    assert canonical_bytes(art) == res.bytes
    assert verify(res.bytes).ok
    assert ir_reference_digest.reference_digest(json.loads(res.bytes)) == res.digest
    again = compile_source(reformat(plan, random.Random(seed + 1)))
    assert again.bytes == res.bytes
