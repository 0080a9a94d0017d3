"""Language-server building blocks in process (issue 12): encoding
negotiation, position conversion with CJK / emoji / combining marks, the
content activation rule, and every feature answering (never raising) at any
position of half-typed or hostile text.  Fast: no server process."""
from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types as lsp

from loopc.lsp import completion, features, graphview, semantic
from loopc.lsp.activation import is_plan_text
from loopc.lsp.analysis import analyse
from loopc.lsp.positions import EditorIndex, choose_encoding
from lsp_support import GOOD, H

from conftest import EXAMPLES


def test_choose_encoding() -> None:
    assert choose_encoding(["utf-16", "utf-8"]) == "utf-8"  # UTF-8 wherever offered
    assert choose_encoding(["utf-32", "utf-16"]) == "utf-16"
    assert choose_encoding(None) == "utf-16"


def test_activation_by_content() -> None:
    assert is_plan_text(H)
    assert is_plan_text("\ufeffapiVersion: loop.plan/v1\n")
    assert is_plan_text("# a comment first\napiVersion: loop.plan/v1\n")  # diagnosed, not ignored
    assert is_plan_text("apiVersion: loop.workflow/v1\nkind: Workflow\n")
    assert is_plan_text("kind: PlanVersion\n")
    assert not is_plan_text("apiVersion: argoproj.io/v1alpha1\nkind: Workflow\n")
    assert not is_plan_text("apiVersion: apps/v1\nkind: Deployment\n")
    assert not is_plan_text("name: CI\non: [push]\n")
    assert not is_plan_text("")


@given(st.text(alphabet="aé日😀\u0301\t \r\n", max_size=40), st.sampled_from(["utf-8", "utf-16", "utf-32"]))
@settings(max_examples=150, derandomize=True, deadline=None)
def test_offset_position_round_trip(text: str, encoding: str) -> None:
    idx = EditorIndex(text, encoding)
    codec = {"utf-8": "utf-8", "utf-16": "utf-16-le", "utf-32": "utf-32-le"}[encoding]
    width = {"utf-8": 1, "utf-16": 2, "utf-32": 4}[encoding]
    for off in range(len(text) + 1):
        if off and text[off - 1] == "\r" and text[off: off + 1] == "\n":
            continue  # inside a CRLF pair
        p = idx.position(off)
        assert idx.offset(p) == off
        line_start = off - idx.line_col(off)[1]
        assert p.character == len(text[line_start:off].encode(codec)) // width


HOSTILE = [
    GOOD,
    H + "nodes:\n  - id: a\n    type: send_mes",
    H + "nodes:\n\t- id: a\n    sendMessage: {text: \"{{ input.",
    H + "edges:\n  - from: {node: , port: \n    to: {",
    H + "x: \x00\x01\ufffd [{{ }}\n",
    H + "a: " + "[" * 100 + "\n",
    H + "nodes: [{id: a, type: fork, fork: {branches: [b, c]}}]\nedges: [{from: {node: a, port: ",
    *[p.read_text() for p in EXAMPLES[:3]],
]


@given(st.sampled_from(HOSTILE), st.integers(0, 10_000), st.sampled_from(["utf-8", "utf-16"]))
@settings(max_examples=120, derandomize=True, deadline=None)
def test_features_answer_anywhere(text: str, at: int, encoding: str) -> None:
    a = analyse("file:///x/plan.yaml", text, 1, encoding, project=False)
    off = at % (len(text) + 1)
    pos = a.index.position(off)
    completion.complete(a.text, a.index, a, pos)
    features.hover(a, pos)
    features.definition(a, pos)
    features.references(a, pos, True)
    features.prepare_rename(a, pos)
    features.document_symbols(a)
    if a.plan is not None:
        semantic.semantic_tokens(a.result, a.index)
        graphview.code_lenses(a)
        whole = lsp.Range(start=lsp.Position(line=0, character=0), end=a.index.position(len(text)))
        graphview.inlay_hints(a, whole)


def test_hover_gives_the_resolved_type_of_built_in_paths() -> None:
    text = (Path(__file__).parent.parent / "examples" / "planner_fan_out.yaml").read_text()
    a = analyse("file:///x/p.yaml", text, 1, "utf-16", project=False)
    i = text.index("ref: item.") + len("ref: item.") + 1
    h = features.hover(a, a.index.position(i))
    assert h is not None and h.contents.value.startswith("`item.") and "`:" in h.contents.value


def test_semantic_tokens_for_every_operator() -> None:
    """Every operator of an expression is a token: ``&&`` and ``||`` of an
    n-ary chain (pygls-independent: the parser keeps no position for them,
    only the operands'), comparisons, ``!``, also around parentheses and
    inside a template."""
    src = (Path(__file__).parent / "fixtures" / "types" / "expr_syntax_ok.yaml").read_text()
    src = src.replace('"input.count > 1 && input.count < 5"',
                      '"(input.count > 1 && input.count < 5) || !(input.topic == \'x\') && input.count != 2"')
    a = analyse("file:///x/p.yaml", src, 1, "utf-16", project=False)
    assert a.plan is not None and not [d for d in a.result.diagnostics if d.severity.value == "error"]
    data = semantic.semantic_tokens(a.result, a.index)
    lines = src.split("\n")
    got, line, ch = [], 0, 0
    for i in range(0, len(data), 5):
        dl, dc, n, t, _ = data[i: i + 5]
        line, ch = (line + dl, dc) if dl else (line, ch + dc)
        got.append((semantic.TOKEN_TYPES[t], lines[line][ch: ch + n]))
    ops = [text for kind, text in got if kind == "operator"]
    assert ops == [">", "&&", "<", "||", "!", "==", "&&", "!="]
