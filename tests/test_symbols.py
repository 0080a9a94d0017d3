"""The symbol index and the source map of a check result (docs/api.md
"Symbol index", "Source map").

Over every plan in ``examples/`` and ``golden/`` (the goldens' sources and
the scenario plans):

* every occurrence's text is its symbol's name, ``symbol_at`` at its first
  and last character gives it back, occurrences never overlap, every symbol
  has exactly one definition and every reference resolves to it;
* renaming symbols in turn (a deterministic sample per plan that takes each
  kind of symbol, every rename that has to make a pass-through explicit and
  every rename the entry links to the Plan input; ``LOOPC_SYMBOLS_ALL=1``
  renames every symbol) gives a plan that checks with no error and the same
  warnings, in which the new name has at least the old occurrences;
* the source map places every model object and every written field, and a
  scalar field's node holds the field's value.

Then: CJK, emoji, combining marks, a BOM and CRLF line breaks before
references; pass-through made explicit in block and flow edges; rename
refusals; bad input; laziness of ``CheckResult.symbols``.
"""

from __future__ import annotations

import functools
import os
import random
from pathlib import Path

import attrs
import pytest

from loopc import value
import loopc
from loopc.compiler import model as M
from loopc.compiler import sourcemap
from loopc.compiler.symbols import ROLES, RenameError, Symbol, SymbolIndex
from loopc.compiler.yamlnodes import YScalar

ROOT = Path(__file__).resolve().parent.parent
KIT = ROOT / "src" / "loopc" / "conformance" / "scenarios"
PLANS = (
    sorted((ROOT / "examples").glob("*.yaml"))
    + sorted((ROOT / "golden").glob("*/*/source.yaml"))
    + sorted((KIT / "plans").glob("*.yaml"))
)
IDS = [str(p.relative_to(ROOT)) for p in PLANS]
NEW = "zz_renamed"
ALL = os.environ.get("LOOPC_SYMBOLS_ALL") == "1"


def _apply(text: str, edits) -> str:
    last = None
    for e in sorted(edits, key=lambda e: (e.span.start, e.span.end), reverse=True):
        assert last is None or e.span.end <= last, "edits overlap"
        text = text[: e.span.start] + e.new_text + text[e.span.end :]
        last = e.span.start
    return text


def _check(text: str) -> loopc.CheckResult:
    return loopc.check_source(text, max_diagnostics=None)


@functools.lru_cache(maxsize=None)
def _result(path: Path) -> loopc.CheckResult:
    return _check(path.read_text(encoding="utf-8"))


def _renamed(sym: Symbol, new: str) -> Symbol:
    if sym.kind == "node":
        return Symbol.node(new)
    return attrs.evolve(sym, name=new)


def test_there_are_plans() -> None:
    assert len(PLANS) >= 60
    assert any("examples" in i for i in IDS) and any("scenarios" in i for i in IDS)


@pytest.mark.parametrize("path", PLANS, ids=IDS)
def test_index_and_renames(path: Path) -> None:
    res = _result(path)
    assert res.errors == (), [d.message for d in res.errors]
    text = res.document.text
    si = res.symbols
    assert si.occurrences
    prev_end = -1
    for o in si.occurrences:
        assert o.role in ROLES
        assert text[o.start : o.end] == o.symbol.name, o
        assert (o.span.start, o.span.end) == (o.start, o.end)
        assert res.line_index.position(o.start) == (o.span.line - 1, o.span.column - 1)
        assert o.start >= prev_end, f"overlapping occurrences at {o}"
        prev_end = o.end
        assert si.symbol_at(o.start) == o.symbol and si.symbol_at(o.end - 1) == o.symbol
        assert si.symbol_at(o.end) == o.symbol or text[o.end : o.end + 1] not in " ,}]\n"
    for sym in si.symbols():
        defs = [o for o in si.references(sym) if o.is_definition]
        d = si.definition(sym)
        assert d is not None, f"{sym} has no definition"
        if sym.kind == "port" and not defs:  # a fixed port: its node declares it
            assert d.symbol == Symbol.node(sym.owner) and si.rename_refusal(sym) is not None
        else:
            assert defs == [d] and d.symbol == sym
        assert list(si.references(sym, include_definition=False)) == [
            o for o in si.references(sym) if not o.is_definition
        ]

    # renames: every symbol, or a deterministic sample covering the special cases
    candidates = [s for s in si.symbols() if si.rename_refusal(s, NEW) is None]
    chosen = set(candidates) if ALL else set()
    if not ALL:
        rng = random.Random(path.name)
        for kind in ("node", "port", "field"):
            of_kind = [s for s in candidates if s.kind == kind]
            chosen.update(rng.sample(of_kind, min(1, len(of_kind))))
        special: dict[str, list[Symbol]] = {"bind": [], "linked": []}
        for s in candidates:
            if s.kind == "field":
                edits = si.rename(s, NEW)
                plain = {(o.start, o.end) for o in si.references(s)}
                if any(e.span.start == e.span.end for e in edits):
                    special["bind"].append(s)  # a pass-through made explicit
                elif any((e.span.start, e.span.end) not in plain for e in edits):
                    special["linked"].append(s)  # the entry's Plan-input field
        for group in special.values():
            chosen.update(rng.sample(group, min(2, len(group))))
    for sym in sorted(chosen):
        edits = si.rename(sym, NEW)
        assert edits and all(e.span.start is not None for e in edits)
        new = _check(_apply(text, edits))
        assert new.errors == (), (sym, [d.message for d in new.errors])
        assert len(new.warnings) == len(res.warnings), (sym, [d.message for d in new.warnings])
        assert len(new.symbols.references(_renamed(sym, NEW))) >= len(si.references(sym)), sym
        assert si.rename(sym, sym.name) == ()


def test_every_role_occurs_somewhere() -> None:
    seen: set[str] = set()
    for path in PLANS:
        seen.update(o.role for o in _result(path).symbols.occurrences)
    assert seen == set(ROLES)


@pytest.mark.parametrize("path", PLANS[:: max(1, len(PLANS) // 12)], ids=IDS[:: max(1, len(PLANS) // 12)])
def test_source_map_places_every_object_and_field(path: Path) -> None:
    res = _result(path)
    sm = res.source_map
    objs = list(sm.objects())
    assert any(isinstance(o, M.Node) for o in objs)
    for obj in objs:
        sp = sm.span(obj)
        assert sp is not None and sp.start is not None, obj
        assert sm.object_at(sp.start) is not None
        for a in value.fields(type(obj)):
            v = getattr(obj, a.name)
            if a.name == "src" or v is None or v is M.MISSING or v is False or v == () or v == {}:
                continue
            path_ = sm.key_path(obj, a.name)
            if path_ is None:
                continue  # not read from the source (malformed ids)
            node = sm.yaml_node(obj, a.name)
            if node is None:
                # defaults the model fills in when the key is omitted
                assert (type(obj), a.name) in {
                    (M.Edge, "to_port"),
                    (M.FanOut, "failure_mode"),
                    (M.Node, "type"),
                    (M.Join, "merge"),
                    (M.Join, "result"),
                } or (isinstance(obj, M.Loop) and a.name == "init"), (obj, a.name)
                continue
            if path_ and isinstance(node, YScalar) and isinstance(v, (str, int)) and not isinstance(v, bool):
                assert node.value == v, (obj, a.name)
            if path_:
                ks = sm.key_span(obj, a.name)
                assert ks is not None and res.document.text[ks.start : ks.end].strip("'\"") == path_[-1]


def test_source_map_lookups_and_errors() -> None:
    res = _check((ROOT / "examples" / "fork_all_join.yaml").read_text(encoding="utf-8"))
    plan, text, sm = res.plan, res.document.text, res.source_map
    join = next(n for n in plan.nodes.values() if isinstance(n.config, M.Join))
    sp = sm.span(join.config, "fork_id")
    assert text[sp.start : sp.end] == join.config.fork_id
    assert text[sm.key_span(join.config, "fork_id").start : sm.key_span(join.config, "fork_id").end] == "forkId"
    assert sm.key_path(join, "config") == ("join",)
    edge = next(iter(plan.edges.values()))
    assert sm.key_path(edge, "from_node") == ("from", "node")
    assert text[sm.span(edge, "from_node").start : sm.span(edge, "from_node").end] == edge.from_node
    name, fs = next(iter(plan.input.items()))
    ks = sm.key_span(fs)
    assert text[ks.start : ks.end] == name
    assert sm.object_at(sm.span(fs).start) is fs
    with pytest.raises(TypeError):
        sourcemap.span("not a model object")
    with pytest.raises(ValueError):
        sourcemap.span(edge, "no_such_field")
    assert loopc.check_source("").source_map is None


UNICODE_PLAN = """\ufeffapiVersion: loop.plan/v1\r
kind: PlanVersion\r
# 日本語のコメント 😀 e\u0301\r
input:\r
  topic: {type: string, required: true, label: "話題 🎉"}\r
output: {}\r
state:\r
  count: {type: number, default: 0}\r
entry: ask\r
nodes:\r
  - id: ask\r
    type: send_message\r
    label: "質問 👩‍💻"\r
    input:\r
      topic: {type: string, required: true}\r
    sendMessage:\r
      text: "日本 😀 e\u0301 {{ input.topic }} — {{ run.state.count }} 𝄞"\r
      target: "#general"\r
      completion: sent\r
  - id: done\r
    type: end\r
    end: {status: succeeded}\r
edges:\r
  - {id: e1, from: {node: ask, port: completed}, to: {node: "done"}}\r
"""


def test_offsets_after_cjk_emoji_bom_and_crlf() -> None:
    res = _check(UNICODE_PLAN)
    assert res.ok, [d.message for d in res.diagnostics]
    text, si = res.document.text, res.symbols
    assert not text.startswith("\ufeff")
    topic = Symbol.field("ask:input", "topic")
    refs = si.references(topic)
    assert [o.role for o in refs] == ["contract", "template"]
    for o in refs:
        assert text[o.start : o.end] == "topic"
        line = text.split("\r\n")[o.span.line - 1]
        assert line[o.span.column - 1 : o.span.end_column - 1] == "topic"
    count = si.references(Symbol.field("plan.state", "count"))[-1]
    assert count.role == "template" and text[count.start : count.end] == "count"
    done = si.references(Symbol.node("done"))
    assert [text[o.start : o.end] for o in done] == ["done", "done"]  # quoted: inside the quotes
    for sym, new in ((topic, "subject"), (Symbol.node("done"), "finished"), (Symbol.field("plan.state", "count"), "n")):
        out = _apply(text, si.rename(sym, new))
        again = _check(out)
        assert again.ok, (sym, [d.message for d in again.diagnostics])
        assert new in out and "日本 😀 e\u0301 {{" in out


BLOCK_EDGES = """apiVersion: loop.plan/v1
kind: PlanVersion
input:
  topic: {type: string, required: true}
output:
  topic: {type: string, required: true}
entry: ask
nodes:
  - id: ask
    type: send_message
    input:
      topic: {type: string, required: true}
    sendMessage: {target: "#general", text: "{{ input.topic }}", completion: sent}
  - id: route
    type: switch
    input:
      topic: {type: string, required: true}
    switch:
      mode: first_match
      cases:
        - {port: short, when: "length(input.topic) < 3"}
      default: long
  - id: done
    type: end
    end: {status: succeeded}
  - id: also
    type: end
    end: {status: succeeded}
edges:
  - id: e1
    from:
      node: ask
      port: completed
    to:
      node: route
    bind:
      topic: {ref: input.topic}
  - id: e2   # a comment stays on its line
    from:
      node: route
      port: short
    to:
      node: done
  - {id: e3, from: {node: route, port: long}, to: {node: also},}
"""


def test_rename_makes_pass_through_explicit() -> None:
    res = _check(BLOCK_EDGES)
    assert res.ok, [d.message for d in res.diagnostics]
    si = res.symbols
    sym = Symbol.field("route:input", "topic")
    assert [o.role for o in si.references(sym)] == ["contract", "when", "bind"]
    out = _apply(res.document.text, si.rename(sym, "subject"))
    assert "  - id: e2   # a comment stays on its line\n    bind: {topic: {ref: output.subject}}\n" in out
    assert "to: {node: also}, bind: {topic: {ref: output.subject}}}" in out
    again = _check(out)
    assert again.ok, [d.message for d in again.diagnostics]
    # the Plan output field is the destination side of those same edges
    out = _apply(res.document.text, si.rename(Symbol.field("plan.output", "topic"), "result"))
    assert "bind: {result: {ref: output.topic}}" in out
    assert _check(out).ok
    # the entry takes the Plan input by name: both sides are renamed together
    edits = si.rename(Symbol.field("plan.input", "topic"), "subject")
    # the Plan input, ask's input, `input.topic` in ask's text and in e1's bind
    assert [e.new_text for e in edits] == ["subject"] * 4
    assert _check(_apply(res.document.text, edits)).ok


def test_rename_refusals() -> None:
    res = _check(BLOCK_EDGES)
    si = res.symbols
    with pytest.raises(RenameError, match="fixed port"):
        si.rename(Symbol.port("ask", "completed"), "done_ok")
    with pytest.raises(RenameError, match="does not occur"):
        si.rename(Symbol.node("nowhere"), "x")
    with pytest.raises(RenameError, match="not a valid name"):
        si.rename(Symbol.node("ask"), "Ask")
    with pytest.raises(RenameError, match="already exists"):
        si.rename(Symbol.node("ask"), "done")
    with pytest.raises(RenameError, match="already has a port"):
        si.rename(Symbol.port("route", "short"), "long")
    assert si.rename_refusal(Symbol.port("route", "short"), "in") is not None
    two = BLOCK_EDGES.replace(
        "    input:\n      topic: {type: string, required: true}\n    switch:",
        "    input:\n      topic: {type: string, required: true}\n      extra: {type: string}\n    switch:",
    )
    si2 = _check(two).symbols
    with pytest.raises(RenameError, match="already has a field `extra`"):
        si2.rename(Symbol.field("route:input", "topic"), "extra")
    # a Plan input field renamed to a name the entry's input already has: the
    # entry would start taking it by name, which no bind can undo
    three = BLOCK_EDGES.replace(
        "input:\n  topic: {type: string, required: true}\noutput",
        "input:\n  topic: {type: string, required: true}\n  other: {type: string}\noutput",
    ).replace(
        "    input:\n      topic: {type: string, required: true}\n    sendMessage:",
        "    input:\n      topic: {type: string, required: true}\n      spare: {type: string}\n    sendMessage:",
    )
    res3 = _check(three)
    assert res3.ok, [d.message for d in res3.diagnostics]
    with pytest.raises(RenameError, match="takes the Plan input by name"):
        res3.symbols.rename(Symbol.field("plan.input", "other"), "spare")
    assert isinstance(RenameError("x"), ValueError)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\x00\x01",
        "apiVersion: loop.plan/v1\nkind: PlanVersion\nnodes: [{id: a, type: fork, fork: {branches: [b, c]}}]\n",
        "apiVersion: loop.plan/v1\nkind: PlanVersion\nentry: a\nnodes:\n  - id: a\n    type: send_mes",
        "apiVersion: loop.plan/v1\nkind: PlanVersion\nedges: [{from: {node: , port: \n",
    ],
)
def test_bad_input_never_raises(text: str) -> None:
    res = loopc.check_source(text)
    si = res.symbols
    for off in range(0, len(text) + 2):
        si.symbol_at(off)
    for sym in si.symbols():
        si.definition(sym)
        si.rename_refusal(sym, "x")
    if res.source_map is not None:
        list(res.source_map.objects())
        res.source_map.object_at(0)


def test_symbols_are_built_lazily_and_once(monkeypatch: pytest.MonkeyPatch) -> None:
    built = []
    orig = SymbolIndex.__init__

    def counting(self, *a, **k):
        built.append(1)
        orig(self, *a, **k)

    monkeypatch.setattr(SymbolIndex, "__init__", counting)
    res = loopc.check_source(BLOCK_EDGES)
    assert built == []
    assert res.symbols is res.symbols
    assert built == [1]
    assert loopc.SymbolIndex is SymbolIndex and loopc.Symbol is Symbol
