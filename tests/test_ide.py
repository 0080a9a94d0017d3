"""loopc.ide in process, without a server (issue 24 item 4): every editor
feature answers plain data (attrs classes, tuples, str/int) in editor
code-point offsets, and completion's key tables are derived from the
declarations and equal the tables that were hard-coded before."""

from __future__ import annotations

import attrs

from loopc import check_source
from loopc.ide import Document, Range
from loopc.ide import completion, graph, hover, keys, semantic, symbols
from lsp_support import GOOD


def _doc(text: str = GOOD) -> Document:
    return Document(text, check_source(text))


def _plain(x: object) -> None:
    """``x`` is built from attrs classes, tuples/lists, str, int, bool and None only."""
    if attrs.has(type(x)):
        assert type(x).__module__.startswith("loopc.ide."), type(x)
        for f in attrs.fields(type(x)):
            _plain(getattr(x, f.name))
    elif isinstance(x, (list, tuple)):
        for y in x:
            _plain(y)
    else:
        assert x is None or isinstance(x, (str, int, bool)), type(x)


def test_key_tables_equal_the_former_hard_coded_ones() -> None:
    assert keys.bool_keys() == frozenset(("required", "startThread"))
    assert keys.duration_keys() == {("wait", "duration"), ("wait", "timeout"), ("retry", "backoff")}
    assert keys.contract_keys() == frozenset(("input", "output", "state", "callbackOutput", "result"))
    assert keys.expr_keys() == frozenset(("when", "condition", "expr"))


def test_value_expr_key_is_declared_in_the_source_schema() -> None:
    from loopc.ir.source_schema import source_schema

    alts = source_schema()["definitions"]["ValueExpr"]["anyOf"]
    assert any(keys.VALUE_EXPR_KEY in (a.get("properties") or {}) for a in alts)


def test_hover_on_a_node_id_is_markdown_over_its_range() -> None:
    d = _doc()
    at = GOOD.index("id: ask") + 4
    h = hover.hover(d, at)
    _plain(h)
    assert h is not None and h.markdown.startswith("**node `ask`** — `send_message`")
    assert h.range == Range(at, at + 3) and GOOD[h.range.start : h.range.end] == "ask"
    assert hover.hover(d, at, codes=["LP1010"]).markdown.count("**LP1010**") == 1  # type: ignore[union-attr]
    assert hover.hover(d, 0) is None


def test_navigation_and_rename_in_editor_offsets() -> None:
    d = _doc()
    use = GOOD.index("{node: ask") + len("{node: ")
    decl = symbols.definition(d, use)
    assert decl is not None and GOOD[decl.start : decl.end] == "ask" and decl.start == GOOD.index("id: ask") + 4
    refs = symbols.references(d, use, True)
    assert refs is not None and decl in refs and {GOOD[r.start : r.end] for r in refs} == {"ask"}
    assert len(refs) == 3  # the declaration, `entry: ask` and the edge's `from`
    assert symbols.prepare_rename(d, use) == (Range(use, use + 3), "ask")
    edits = symbols.rename(d, use, "asker")
    _plain(edits)
    assert edits is not None and {GOOD[e.range.start : e.range.end] for e in edits} == {"ask"}
    assert symbols.node_at(d, use) == "ask"


def test_bom_shifts_every_range_by_one_code_point() -> None:
    plain, bom = _doc(), _doc("\ufeff" + GOOD)
    at = GOOD.index("id: ask") + 4
    assert bom.shift == 1 and plain.shift == 0
    r0, r1 = symbols.definition(plain, at), symbols.definition(bom, at + 1)
    assert r0 is not None and r1 == Range(r0.start + 1, r0.end + 1)


def test_outline_is_a_tree_of_plain_symbols() -> None:
    out = symbols.document_symbols(_doc())
    _plain(out)
    assert [s.name for s in out] == ["input", "output", "nodes", "edges"]
    nodes = out[2]
    assert nodes.kind == "Namespace" and [n.name for n in nodes.children or ()] == ["ask", "done"]
    ask, done = nodes.children or ()
    assert [p.name for p in ask.children or ()] == ["completed", "failed"] and done.children == ()
    assert out[0].children is not None and out[0].children[0].children is None  # a field is a leaf


def test_completion_items_carry_offsets_not_protocol_ranges() -> None:
    text = GOOD.replace("      completion: sent\n", "      completion: se\n")
    d = _doc(text)
    at = text.index("completion: se") + len("completion: se")
    items = completion.complete(text, at, d.result)
    _plain(items)
    assert [i.label for i in items] == ["sent", "callback"]  # the registry's choices, in declaration order
    sent = next(i for i in items if i.label == "sent")
    assert (
        sent.kind == "EnumMember" and sent.edit.insert == Range(at - 2, at) and sent.edit.replace == Range(at - 2, at)
    )
    # no plan at all: the top-level keys
    key_items = completion.complete("", 0, None)
    assert {"apiVersion", "kind", "nodes"} <= {i.label for i in key_items}


def test_semantic_tokens_are_single_line_sorted_and_disjoint() -> None:
    d = _doc()
    toks = semantic.semantic_tokens(d)
    _plain(toks)
    assert toks and all(t.type in semantic.TOKEN_TYPES for t in toks)
    assert [GOOD[t.start : t.end] for t in toks] == ["{{", "input", "topic", "}}"]
    assert all(a.end <= b.start for a, b in zip(toks, toks[1:]))


def test_graph_results() -> None:
    d = _doc()
    item = graph.prepare(d, "ask")
    _plain(item)
    assert item is not None and item.node == "ask" and GOOD[item.selection.start : item.selection.end] == "ask"
    (down,) = graph.outgoing(d, "ask")
    assert down.item.node == "done" and [GOOD[r.start : r.end] for r in down.ranges] == ["done"]
    (up,) = graph.incoming(d, "done")
    assert up.item.node == "ask"
    lenses = graph.code_lenses(d)
    _plain(lenses)
    assert [x.title for x in lenses] == ["0 upstream · 1 downstream", "1 upstream · 0 downstream"]
    hints = graph.inlay_hints(d, 0, len(GOOD))
    _plain(hints)
    assert all(0 <= h.offset <= len(GOOD) for h in hints)
    assert [h.offset for h in hints] == sorted(h.offset for h in hints)


def test_ide_never_imports_the_protocol_libraries() -> None:
    import grimp

    g = grimp.build_graph("loopc", include_external_packages=True)
    for m in sorted(g.find_children("loopc.ide")):
        assert not g.find_modules_directly_imported_by(m) & {"lsprotocol", "pygls"}, m


def test_key_tables_follow_an_amended_registry() -> None:
    """A boolean / duration field declared on a kind reaches completion's
    tables with no edit in loopc.ide, and leaves with the amendment."""
    from loopc import kinds
    from loopc.kinds.base import S_VALUE, SourceField

    wait = kinds.KINDS["wait"]
    new = wait.evolve(
        source={
            **wait.source,
            "quiet": SourceField({"type": "boolean"}),
            "grace": SourceField(S_VALUE, form="value", type="duration"),
        },
    )
    with kinds.amended(new):
        assert "quiet" in keys.bool_keys() and ("wait", "grace") in keys.duration_keys()
    assert "quiet" not in keys.bool_keys() and ("wait", "grace") not in keys.duration_keys()


def test_completion_follows_an_amended_registry() -> None:
    """A field declared on a kind is offered as a key of its config and its
    choices as values, read from ``kinds.tables()`` at request time."""
    from loopc import kinds
    from loopc.kinds.base import SourceField, s_choice

    wait = kinds.KINDS["wait"]
    new = wait.evolve(source={**wait.source, "mood": SourceField(s_choice("calm", "busy"), choices=("calm", "busy"))})
    text = "nodes:\n  - id: w\n    type: wait\n    wait:\n      "
    val = text + "mood: "
    with kinds.amended(new):
        assert "mood" in {i.label for i in completion.complete(text, len(text), None)}
        assert [i.label for i in completion.complete(val, len(val), None)] == ["calm", "busy"]
    assert "mood" not in {i.label for i in completion.complete(text, len(text), None)}
