"""Values are shown in JSON/YAML spelling wherever a user reads them —
hover, messages, ``loopc explain`` — never Python's (``True``, ``None``)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lsprotocol import types as lsp
from ruamel.yaml import YAML

import loopc
from loopc.diagnostics import value_text
from loopc.lsp.analysis import analyse
from loopc.lsp.features import hover

from conftest import HEADER

PYTHON = re.compile(r"\b(True|False|None)\b")

PLAN = (
    HEADER
    + """input: {}
output: {}
state:
  ready: {type: boolean, default: false}
  note: {type: string, default: "it's"}
  tries: {type: number, default: 2}
entry: done
nodes:
  - id: done
    type: end
    end: {status: succeeded}
edges: []
"""
)


@pytest.mark.parametrize(("field", "shown"), [("ready", "`false`"), ("note", "`'it''s'`"), ("tries", "`2`")])
def test_hover_shows_defaults_as_written(field: str, shown: str) -> None:
    a = analyse("file:///p.yaml", PLAN, 1, "utf-16", project=False)
    line = next(i for i, t in enumerate(PLAN.splitlines()) if t.startswith(f"  {field}:"))
    h = hover(a, lsp.Position(line=line, character=3))
    assert h is not None and f"default {shown}" in h.contents.value, h
    assert not PYTHON.search(h.contents.value)


# what a message shows of a string (control and separator characters are
# escaped by the renderers, loopc.cli.textsafe)
_TEXT = st.text(
    st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp"), blacklist_characters="\ufeff\ufffe\uffff"), max_size=8
)


@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers(-(2**53), 2**53)
        | st.floats(allow_nan=False, allow_infinity=False)
        | _TEXT,
        lambda kids: st.lists(kids, max_size=3) | st.dictionaries(_TEXT, kids, max_size=3),
        max_leaves=8,
    )
)
def test_value_text_is_yaml_that_reads_back(value) -> None:
    """Whatever value_text shows, YAML reads back as the same value, and it
    is never Python's spelling of true, false or null."""
    assert value_text(value) not in ("True", "False", "None")
    assert YAML(typ="safe").load(value_text(value)) == value


def test_scope_kind_message_spells_the_value() -> None:
    src = (
        HEADER
        + """input:
  room: {type: scope, required: false, default: {kind: true, scopeId: chn_x}}
output: {}
entry: done
nodes:
  - id: done
    type: end
    end: {status: succeeded}
edges: []
"""
    )
    msgs = [d.message for d in loopc.check_source(src).diagnostics]
    assert any("not true" in m for m in msgs), msgs
    assert not any(PYTHON.search(m) for m in msgs), msgs
