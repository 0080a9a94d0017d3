"""The canonical encoder of the typed IR model: model -> RFC 8785 text of the
plan and of its semantic projection (docs/ir.md#canonical-bytes,
docs/ir.md#semantic-digest), written without building the JSON tree
(:func:`encode_plan`, :func:`envelope_text`), and the model's JSON view,
which is that text read back (:func:`view`, :func:`plan_to_json`,
:func:`node_to_json`, ...): the one description of how each wire object is
written, so the JSON form and the bytes cannot disagree.  Re-exported by
:mod:`loopc.ir.model`."""
from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Mapping

from loopc.ir.model.configs import _CONFIG_FIELDS_BY_WIRE, Config
from loopc.ir.surface.declarations import CONFIGS, FIELD_SCHEMA, IMPLICIT_ROUTE, NODE, SCOPE_DECL, SCOPE_REF
from loopc.kinds.base import attr_name
from loopc.kinds.spec import Str, Tagged
from loopc.ir.model.contracts import NO_DEFAULT, FieldSchema
from loopc.ir.model.instrs import Instr, Lit, MakeObject, Ref
from loopc.ir.model.nodes import Edge, Node
from loopc.ir.model.scopes import DISPOSITION_MEMBERS, Disposition, ScopeDecl, ScopeRef

if TYPE_CHECKING:
    from loopc.ir.model.plan import Plan


_q = json.encoder.encode_basestring  # a JSON string as RFC 8785 writes it (no ASCII escaping)
_MAX_SAFE = 2**53 - 1


def _utf16(k: str) -> bytes:
    return k.encode("utf-16-be")


def _keys(d: Mapping[str, Any]) -> list[str]:
    """``d``'s keys in RFC 8785 order (UTF-16 code units; code points when
    every key is in the Basic Multilingual Plane)."""
    ks = sorted(d)
    for k in ks:
        if not k.isascii() and max(k) > "\uffff":
            return sorted(ks, key=_utf16)
    return ks


def _scalar(v: Any) -> tuple[str, int]:
    """Canonical text and nesting depth of a JSON value."""
    t = type(v)
    if t is str:
        return _q(v), 0
    if t is bool:
        return ("true" if v else "false"), 0
    if v is None:
        return "null", 0
    if t is int and -_MAX_SAFE <= v <= _MAX_SAFE:
        return str(v), 0
    from loopc.ir.canonical import value_text

    return value_text(v)


def _strs(xs: Any) -> str:
    return "[" + ",".join([_q(x) for x in xs]) + "]"


#: a memo of one encoding: object id -> its text(s) and depth (the model outlives it)
_Memo = dict

#: what the semantic projection leaves out (:mod:`loopc.ir.digest`: annotations
#: of FieldSchemas, nodes, edges; opcode -> config contract), read on first use
_PROJECTION: Any = ()


def _projection_rules() -> None:
    global _PROJECTION
    if not _PROJECTION:
        from loopc.ir import digest as D

        _PROJECTION = (D.FIELD_ANNOTATIONS, D.NODE_ANNOTATIONS, D.EDGE_ANNOTATIONS, D.CONFIG_CONTRACTS)


# ---------------------------------------------------------------------------
# The version of what is written (docs/ir.md#envelope-and-versions)
# ---------------------------------------------------------------------------
# The encoder counts the ``since`` of every field, union variant and enum
# value it writes, read off the declared surface (:mod:`loopc.ir.surface`,
# whose walk counts the same on the reading side); instruction trees are
# counted by :func:`loopc.ir.instr.scan_instrs`.  The highest is kept in the
# encoding's memo under _VER; only values newer than v1 are looked at.

_VER = "version"

#: FieldSchema type, opcode, failure action, implicit status, scope kinds -> since (newer than v1 only)
_TYPE_V = {k: v for k, v in (FIELD_SCHEMA.fields["type"].spec.enum or {}).items() if v > 1}  # type: ignore[attr-defined]
_OP_V = {op: since for op, (_, since) in NODE.variants.items() if since > 1}
_ACTION_V = {a: since for a, (_, since) in IMPLICIT_ROUTE.variants.items() if since > 1}
_STATUS_V = {k: v for k, v in (IMPLICIT_ROUTE.common["status"].spec.enum or {}).items() if v > 1}  # type: ignore[attr-defined]
_SCOPE_V = {k: since for k, (_, since) in SCOPE_REF.variants.items() if since > 1}
_DECL_V = {k: since for k, (_, since) in SCOPE_DECL.variants.items() if since > 1}


def _member_version(f: Any) -> tuple[int, dict[str, int] | None, tuple[str, dict[str, int]] | None] | None:
    """What can raise the version when a config member is written: its own
    ``since``, the values of an enum newer than v1, the variants of a tagged
    union (tag attribute, variant -> since); ``None`` when nothing can."""
    sp = f.spec
    enum = {k: v for k, v in sp.enum.items() if v > 1} if type(sp) is Str and sp.enum else None
    tagged = None
    if type(sp) is Tagged:
        newer = {t: since for t, (_, since) in sp.variants.items() if since > 1}
        tagged = (attr_name(sp.tag), newer) if newer else None
    if f.since <= 1 and not enum and tagged is None:
        return None
    return f.since, enum or None, tagged


#: op -> [(attr name, wire name, codec, required, version info, key text)] in wire-name order
_CONFIG_ROWS: dict[str, list[tuple[str, str, str, bool, Any, str]]] = {
    op: [(name, wire, codec, required, _member_version(CONFIGS[op].fields[wire]), _q(wire) + ":")
         for name, wire, codec, required in rows]
    for op, rows in _CONFIG_FIELDS_BY_WIRE.items()
}


def _bump(memo: _Memo, v: int) -> None:
    if v > memo.get(_VER, 1):
        memo[_VER] = v


def _config_version(memo: _Memo, value: Any, info: tuple[int, Any, Any]) -> None:
    since, enum, tagged = info
    v = since
    if enum is not None:
        v = max(v, enum.get(value, 1))
    if tagged is not None:
        v = max(v, tagged[1].get(getattr(value, tagged[0]), 1))
    if v > 1:
        _bump(memo, v)


def _field_text(fs: FieldSchema, memo: _Memo) -> tuple[str, str, int]:
    """``(text, projection text, depth)`` of a FieldSchema (its members
    in key order; iterative over ``items``)."""
    got = memo.get(id(fs))
    if got is not None:
        return got
    annotations = _PROJECTION[0]
    chain = []
    cur: FieldSchema | None = fs
    while cur is not None and id(cur) not in memo:
        chain.append(cur)
        cur = cur.items
    inner = memo[id(cur)] if cur is not None else None
    for f in reversed(chain):
        if f.type in _TYPE_V:
            _bump(memo, _TYPE_V[f.type])
        depth = 1
        default = desc = items = items_p = label = values = ""
        if f.default is not NO_DEFAULT:
            t, d = _scalar(f.default)
            default = f'"default":{t},'
            depth = max(depth, d + 1)
        if f.description is not None:
            desc = f'"description":{_q(f.description)},'
        if f.items is not None:
            assert inner is not None  # f.items is cur (memoized) or the previous chain step
            items = f'"items":{inner[0]},'
            items_p = items if inner[1] is inner[0] else f'"items":{inner[1]},'
            depth = max(depth, inner[2] + 1)
        if f.label is not None:
            label = f'"label":{_q(f.label)},'
        if f.values is not None:
            values = f',"values":{_strs(f.values)}'
            depth = max(depth, 2)
        tail = f'"required":{"true" if f.required else "false"},"type":{_q(f.type)}{values}}}'
        text = f"{{{default}{desc}{items}{label}{tail}"
        desc_p = "" if "description" in annotations else desc
        label_p = "" if "label" in annotations else label
        if desc_p is desc and label_p is label and items_p is items:
            proj = text
        else:
            proj = f"{{{default}{desc_p}{items_p}{label_p}{tail}"
        inner = memo[id(f)] = (text, proj, depth)
    return inner  # type: ignore[return-value]


def _contract_text(c: Mapping[str, FieldSchema], memo: _Memo) -> tuple[str, str, int]:
    """``(text, projection text, depth)`` of a contract."""
    got = memo.get(id(c))
    if got is not None:
        return got
    full = []
    proj: list[str] | None = None  # built from the first member whose projection differs
    depth = 1
    for k in _keys(c):
        f, p, d = _field_text(c[k], memo)
        key = _q(k) + ":"
        full.append(key + f)
        if p is not f:
            if proj is None:
                proj = full[:-1]
            proj.append(key + p)
        elif proj is not None:
            proj.append(full[-1])
        if d >= depth:
            depth = d + 1
    text = "{" + ",".join(full) + "}"
    got = memo[id(c)] = (text, text if proj is None else "{" + ",".join(proj) + "}", depth)
    return got


def _instr_text(instr: Instr, memo: _Memo) -> tuple[str, int]:
    """``(text, depth)`` of an instruction tree.  Iterative (post-order)."""
    got = memo.get(id(instr))
    if got is not None:
        return got
    out: list[tuple[str, int]] = []
    stack: list[tuple[Any, bool]] = [(instr, False)]
    pop = stack.pop
    push = stack.append
    while stack:
        i, built = pop()
        if not built:
            got = memo.get(id(i))
            if got is None:
                cls = i.__class__
                if cls is Lit:
                    t, d = _scalar(i.value)
                    got = memo[id(i)] = ('["lit",' + _q(i.type.wire) + "," + t + "]", d + 1)
                elif cls is Ref:
                    got = memo[id(i)] = ('["ref",' + ",".join([_q(x) for x in (i.type.wire, i.root, *i.path)]) + "]", 1)
                else:
                    push((i, True))
                    for k in reversed(i.children):
                        push((k, False))
                    continue
            out.append(got)
            continue
        n = len(i.children)
        kids = out[len(out) - n:]
        del out[len(out) - n:]
        parts = [_q(i.op), _q(i.type.wire)]
        if i.__class__ is MakeObject:
            for k, (t, _) in zip(i.keys, kids):
                parts.append(_q(k))
                parts.append(t)
        else:
            parts.extend([t for t, _ in kids])
        got = memo[id(i)] = ("[" + ",".join(parts) + "]", 1 + max([0] + [d for _, d in kids]))
        out.append(got)
    return out[0]


def _bind_text(b: Mapping[str, Instr], memo: _Memo) -> tuple[str, int]:
    if not b:
        return "{}", 1
    parts = []
    depth = 1
    get = memo.get
    for k in _keys(b):
        x = b[k]
        t, d = get(id(x)) or _instr_text(x, memo)
        parts.append(_q(k) + ":" + t)
        if d >= depth:
            depth = d + 1
    return "{" + ",".join(parts) + "}", depth


def _scope_text(stack: tuple[ScopeRef, ...], memo: _Memo) -> tuple[str, int]:
    got = memo.get(id(stack))
    if got is None:
        for s in stack:
            if s.kind in _SCOPE_V:
                _bump(memo, _SCOPE_V[s.kind])
        parts = [("{" if s.branch is None else '{"branch":' + _q(s.branch) + ",")
                 + '"kind":' + _q(s.kind) + ',"owner":' + _q(s.owner) + "}" for s in stack]
        got = memo[id(stack)] = ("[" + ",".join(parts) + "]", 2 if parts else 1)
    return got


def _disp_text(d: Disposition, memo: _Memo) -> str:
    got = memo.get(id(d))
    if got is None:
        if d.action in _ACTION_V:
            _bump(memo, _ACTION_V[d.action])
        if d.status in _STATUS_V:
            _bump(memo, _STATUS_V[d.status])
        members = {"action": d.action}
        if d.status is not None:
            members["status"] = d.status
        for k in DISPOSITION_MEMBERS.get(d.action, ()):
            members[k] = getattr(d, k)
        got = memo[id(d)] = "{" + ",".join([f'"{k}":' + _scalar(members[k])[0] for k in sorted(members)]) + "}"
    return got


def _config_text(cfg: Config, memo: _Memo) -> tuple[str, str, int]:
    """``(text, projection text, depth)`` of a node config (its members
    in key order)."""
    projected = _PROJECTION[3].get(cfg.OP)
    full = []
    proj: list[str] | None = None if projected is None else []
    depth = 1
    for name, wire, codec, required, ver, key in _CONFIG_ROWS[cfg.OP]:
        v = getattr(cfg, name)
        if not required and (v is None or v is False):
            continue
        if ver is not None:
            _config_version(memo, v, ver)
        p = None
        d = 0
        if codec == "instr":
            t, d = memo.get(id(v)) or _instr_text(v, memo)
        elif codec == "str" or codec == "int" or codec == "flag":
            t, d = _scalar(v)
        elif codec == "bind":
            t, d = _bind_text(v, memo)
        elif codec == "contract":
            t, p, d = _contract_text(v, memo)
            if wire != projected:
                p = None
        elif codec == "strs":
            t, d = _strs(v), 1
        elif codec == "cases":
            parts = []
            d = 1
            for c in v:
                w, wd = _instr_text(c.when, memo)
                parts.append('{"port":' + _q(c.port) + ',"when":' + w + "}")
                d = max(d, wd + 2)
            t = "[" + ",".join(parts) + "]"
        elif codec == "work_scope":
            t, d = '{"mode":' + _q(v.mode), 1
            if v.scope is not None:
                s, sd = _instr_text(v.scope, memo)
                t, d = t + ',"scope":' + s, sd + 1
            t += "}"
        elif codec == "related_scopes":
            t, d = '{"form":' + _q(v.form), 1
            if v.items is not None:
                items = [_instr_text(x, memo) for x in v.items]
                t += ',"items":[' + ",".join([s for s, _ in items]) + "]"
                d = max([2] + [sd + 2 for _, sd in items])
            if v.value is not None:
                s, sd = _instr_text(v.value, memo)
                t += ',"value":' + s
                d = max(d, sd + 1)
            t += "}"
        elif codec == "work_items":
            s, sd = _instr_text(v.allowed_responders, memo)
            t, d = '{"allowedResponders":' + s + "}", sd + 1
        else:  # pragma: no cover - every codec of _CODECS is handled above
            raise TypeError(f"no canonical text for codec {codec!r}")
        full.append(key + t)
        if proj is not None:
            proj.append(key + (t if p is None else p))
        if d >= depth:
            depth = d + 1
    text = "{" + ",".join(full) + "}"
    return text, (text if proj is None else "{" + ",".join(proj) + "}"), depth


def _node_text(n: Node, memo: _Memo) -> tuple[str, str, int]:
    """``(text, projection text, depth)`` of a node (its members
    in key order)."""
    get = memo.get
    cfg = n.config
    op = cfg.OP
    if op in _OP_V:
        _bump(memo, _OP_V[op])
    config, config_p, depth = _config_text(cfg, memo)
    eff = n.effects
    effects = get(id(eff))
    if effects is None:
        effects = memo[id(eff)] = (f'{{"reads":{_strs(eff.reads)},"watches":{_strs(eff.watches)},'
                                   f'"writes":{_strs(eff.writes)}}}')
    inp, inp_p, d = get(id(n.input)) or _contract_text(n.input, memo)
    depth = max(depth, d, 2)
    src = []
    src_p = []
    pd = 1  # depth of the deeper of the source and target lists
    for p in n.source_ports:
        edge = "" if p.edge is None else f'"edge":{_q(p.edge)},'
        if p.implicit is not None:
            edge += f'"implicit":{_disp_text(p.implicit, memo)},'
            pd = max(pd, 3)
        if p.output is None:
            t = f'{{{edge}"name":{_q(p.name)},"output":null}}'
            src.append(t)
            src_p.append(t)
            pd = max(pd, 2)
        else:
            o, o_p, od = get(id(p.output)) or _contract_text(p.output, memo)
            head = f'{{{edge}"name":{_q(p.name)},"output":'
            t = f"{head}{o}}}"
            src.append(t)
            src_p.append(t if o_p is o else f"{head}{o_p}}}")
            pd = max(pd, od + 2)
    if n.target_ports:
        pd = max(pd, 3)
    scope, sd = get(id(n.scope)) or _scope_text(n.scope, memo)
    depth = max(depth, pd + 1, sd) + 1
    desc = "" if n.description is None else f',"description":{_q(n.description)}'
    label = "" if n.label is None else f',"label":{_q(n.label)}'
    mid = f',"effects":{effects},"id":{_q(n.id)},"input":'
    ports = f',"op":{_q(op)},"ports":{{"source":['
    target = ",".join([f'{{"edges":{_strs(t.edges)},"name":{_q(t.name)}}}' for t in n.target_ports])
    retry = ""
    if n.retry is not None:
        retry = (f',"retry":{{"backoff":{_scalar(n.retry.backoff)[0]},'
                 f'"maxAttempts":{_scalar(n.retry.max_attempts)[0]}}}')
    tail = f'],"target":[{target}]}}{retry},"scope":{scope}}}'
    source = ",".join(src)
    text = f'{{"config":{config}{desc}{mid}{inp}{label}{ports}{source}{tail}'
    ann = _PROJECTION[1]
    desc_p = "" if "description" in ann else desc
    label_p = "" if "label" in ann else label
    if config is config_p and inp is inp_p and desc is desc_p and label is label_p and src == src_p:
        return text, text, depth
    source = ",".join(src_p)
    return text, f'{{"config":{config_p}{desc_p}{mid}{inp_p}{label_p}{ports}{source}{tail}', depth


def _edge_text(e: Edge, memo: _Memo) -> tuple[str, str, int]:
    """``(text, projection text, depth)`` of an edge (its members
    in key order)."""
    get = memo.get
    bind, depth = _bind_text(e.bind, memo)
    eff = e.effects
    effects = get(id(eff))
    if effects is None:
        effects = memo[id(eff)] = f'{{"reads":{_strs(eff.reads)}}}'
    scope, sd = get(id(e.scope)) or _scope_text(e.scope, memo)
    depth = max(depth, sd, 2) + 1
    disp = "" if e.disposition is None else ',"disposition":' + _disp_text(e.disposition, memo)
    head = (f'{{"bind":{bind}{disp},"effects":{effects},"from":{{"node":{_q(e.from_node)},"port":'
            f'{_q(e.from_port)}}},"id":{_q(e.id)}')
    tail = f',"scope":{scope},"to":{{"node":{_q(e.to_node)},"port":{_q(e.to_port)}}}}}'
    if e.label is None:
        text = head + tail
        return text, text, depth
    text = f'{head},"label":{_q(e.label)}{tail}'
    return text, head + tail if "label" in _PROJECTION[2] else text, depth


def _decl_text(s: ScopeDecl, memo: _Memo) -> tuple[str, int]:
    if s.kind in _DECL_V:
        _bump(memo, _DECL_V[s.kind])
    t = "{"
    if s.branches is not None:
        t += '"branches":' + _strs(s.branches) + ","
    if s.kind != "loop":
        t += '"join":' + _scalar(s.join)[0] + ","
    return t + '"kind":' + _q(s.kind) + ',"owner":' + _q(s.owner) + "}", 1 if s.branches is None else 2


def _list_depth(depths: list[int]) -> int:
    return 1 + max(depths) if depths else 1


def encode_plan(plan: Plan) -> tuple[str, str, int, int]:
    """The one encoder's core: ``(text, projection, depth, version)`` — the
    RFC 8785 canonical text of ``plan``'s wire JSON, that of its semantic
    projection (:func:`loopc.ir.digest.semantic_projection` of it, which the
    digest hashes), its nesting depth (:func:`loopc.ir.canonical.scan`) and
    the artifact version its fields, variants and enum values need (the
    highest ``since`` written; instruction trees aside, which
    :func:`loopc.ir.instr.scan_instrs` counts), straight from the model:
    objects shared in the model are encoded once.  Raises
    :class:`~loopc.ir.canonical.CanonicalizationError` as
    :func:`~loopc.ir.canonical.canonical_bytes` does (for a literal value)."""
    _projection_rules()
    memo: _Memo = {}
    nodes = [_node_text(n, memo) for n in plan.nodes]
    edges = [_edge_text(e, memo) for e in plan.edges]
    inp = _contract_text(plan.input, memo)
    out = _contract_text(plan.output, memo)
    state = _contract_text(plan.state, memo)
    bind, bd = _bind_text(plan.entry.bind, memo)
    entry = ',"entry":{"bind":' + bind + ',"node":' + _q(plan.entry.node) + "}"
    decls = [_decl_text(s, memo) for s in plan.scopes]
    scopes = ',"scopes":[' + ",".join([t for t, _ in decls]) + "]"
    depth = 1 + max(_list_depth([d for _, _, d in edges]), bd + 1, inp[2], _list_depth([d for _, _, d in nodes]),
                    out[2], _list_depth([d for _, d in decls]), state[2])
    text = ('{"edges":[' + ",".join([t for t, _, _ in edges]) + "]" + entry + ',"input":' + inp[0]
            + ',"nodes":[' + ",".join([t for t, _, _ in nodes]) + '],"output":' + out[0] + scopes
            + ',"state":' + state[0] + "}")
    proj = ('{"edges":[' + ",".join([p for _, p, _ in edges]) + "]" + entry + ',"input":' + inp[1]
            + ',"nodes":[' + ",".join([p for _, p, _ in nodes]) + '],"output":' + out[1] + scopes
            + ',"state":' + state[1] + "}")
    return text, proj, depth, memo.get(_VER, 1)


def envelope_text(version: int, digest: str, source_version: str, plan_text: str) -> str:
    """Canonical text of an artifact from its envelope and :func:`encode_plan`'s text."""
    from loopc.ir.versions import artifact_version, compiler_version

    return ('{"artifactVersion":' + _q(artifact_version(version)) + ',"compilerVersion":'
            + _q(compiler_version(version)) + ',"digest":' + _q(digest) + ',"plan":' + plan_text
            + ',"sourceVersion":' + _q(source_version) + "}")


# ---------------------------------------------------------------------------
# The JSON view: read back from the canonical text
# ---------------------------------------------------------------------------

def _view_int(s: str) -> int | float:
    """An integer token as the strict decoder reads it: beyond ±(2^53−1) it
    is the double RFC 8785 wrote that way."""
    v = int(s)
    return v if -_MAX_SAFE <= v <= _MAX_SAFE else float(v)


_loads = json.JSONDecoder(parse_int=_view_int).decode
_scanstring = json.decoder.scanstring  # type: ignore[attr-defined]
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")


def _loads_deep(s: str) -> Any:
    """:func:`_loads` without recursion, for text nested deeper than the C
    parser goes (a hand-built model; artifacts nest at most 256 levels).
    ``s`` is canonical text: no whitespace, valid JSON."""
    stack: list[list[Any]] = []  # [container, pending key] per open container
    i = 0
    while True:
        c = s[i]
        if c == "{" or c == "[":
            i += 1
            cont: Any = {} if c == "{" else []
            if s[i] == "}" or s[i] == "]":
                i += 1
                v = cont
            else:
                key = None
                if c == "{":
                    key, i = _scanstring(s, i + 1)
                    i += 1  # ':'
                stack.append([cont, key])
                continue
        elif c == '"':
            v, i = _scanstring(s, i + 1)
        elif c == "t":
            v, i = True, i + 4
        elif c == "f":
            v, i = False, i + 5
        elif c == "n":
            v, i = None, i + 4
        else:
            m = _NUMBER.match(s, i)
            assert m is not None
            v = float(m.group()) if m.group(1) or m.group(2) else _view_int(m.group())
            i = m.end()
        while True:  # attach v to the open container; close what ends here
            if not stack:
                return v
            top = stack[-1]
            if type(top[0]) is dict:
                top[0][top[1]] = v
            else:
                top[0].append(v)
            if s[i] == ",":
                if type(top[0]) is dict:
                    top[1], i = _scanstring(s, i + 2)
                    i += 1  # ':'
                else:
                    i += 1
                break
            i += 1
            v = stack.pop()[0]


def view(text: str) -> Any:
    """The JSON view of canonical text (:func:`encode_plan`'s and the
    functions below): the value the strict decoder
    (:func:`loopc.ir.decoder.parse_json`) reads from the same bytes, so the
    typed model's JSON form is its canonical text read back and the two
    cannot disagree.  Fresh objects on every call."""
    try:
        return _loads(text)
    except RecursionError:
        return _loads_deep(text)


def instr_to_json(instr: Instr, memo: Any = None) -> list[Any]:
    """Typed :data:`Instr` → wire JSON array (the JSON view of its canonical
    text).  Iterative.  Raises :class:`~loopc.ir.canonical.CanonicalizationError`
    for a literal RFC 8785 cannot represent."""
    return view(_instr_text(instr, {})[0])


def field_to_json(fs: FieldSchema) -> dict[str, Any]:
    """:class:`FieldSchema` → JSON (the view of its canonical text; iterative over ``items``)."""
    _projection_rules()
    return view(_field_text(fs, {})[0])


def contract_to_json(c: Mapping[str, FieldSchema], memo: Any = None) -> dict[str, Any]:
    """Contract → JSON (the view of its canonical text)."""
    _projection_rules()
    return view(_contract_text(c, {})[0])


def config_to_json(cfg: Config, memo: Any = None) -> dict[str, Any]:
    """Config class → wire JSON (the view of its canonical text: optional
    members omitted when ``None``, ``startThread`` written only when true)."""
    _projection_rules()
    return view(_config_text(cfg, {})[0])


def node_to_json(n: Node, memo: Any = None) -> dict[str, Any]:
    """:class:`Node` → wire JSON (the view of its canonical text)."""
    _projection_rules()
    return view(_node_text(n, {})[0])


def edge_to_json(e: Edge, memo: Any = None) -> dict[str, Any]:
    """:class:`Edge` → wire JSON (the view of its canonical text)."""
    _projection_rules()
    return view(_edge_text(e, {})[0])


def plan_to_json(p: Plan) -> dict[str, Any]:
    """:class:`Plan` → wire JSON (the view of :func:`encode_plan`'s text)."""
    return view(encode_plan(p)[0])
