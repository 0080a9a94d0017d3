"""The pyproject.toml prefilter (loopc.cli.config.may_name_loopc) never
skips a file that has a loopc table: whatever spelling TOML allows for the
keys ``tool`` and ``loopc``, a document tomllib reads a ``tool.loopc`` from
passes the prefilter (issue 26, start-up: the others are not parsed)."""

from __future__ import annotations

import tomllib

from hypothesis import given
from hypothesis import strategies as st

from loopc.cli.config import may_name_loopc

_KEY_LOOPC = st.sampled_from(["loopc", '"loopc"', "'loopc'", '"lo\\u006fpc"', '"\\u006Coopc"'])
_KEY_TOOL = st.sampled_from(["tool", '"tool"', "'tool'", '"t\\u006fol"'])
_SP = st.sampled_from(["", " ", "\t", "  "])
_NOISE = st.sampled_from(["", '[project]\nname = "loopc-plans"\n', "# loopc\n", '[other.ruff]\nline-length = 9\n', 'note = "a loopc b"\n'])


@st.composite
def _documents(draw: st.DrawFn) -> str:
    tool, loopc, sp = draw(_KEY_TOOL), draw(_KEY_LOOPC), draw(_SP)
    form = draw(st.integers(0, 5))
    body = {
        0: f"[{sp}{tool}{sp}.{sp}{loopc}{sp}]\nerror = []\n",
        1: f"[{tool}]\n{loopc}{sp}={sp}{{ error = [] }}\n",
        2: f"[{tool}]\n{loopc}{sp}.{sp}error = []\n",
        3: f"{tool}{sp}.{sp}{loopc}{sp}.{sp}error = []\n",
        4: f"{tool} = {{{sp}{loopc}{sp}={sp}{{}} }}\n",
        5: f"[{tool}.{loopc}.sub]\nx = 1\n",
    }[form]
    return body + draw(_NOISE)  # the noise after: a root-level dotted key must precede every table


@given(_documents())
def test_every_loopc_table_passes_the_prefilter(doc: str) -> None:
    table = tomllib.loads(doc)
    assert "loopc" in table["tool"]
    assert may_name_loopc(doc.encode())


def test_a_broken_loopc_header_is_parsed_so_it_is_reported() -> None:
    for doc in ("[tool.loopc\nerror = []\n", "[tool.loopc # note\n", '[tool."loopc"\r\n', "[tool]\nloopc\n"):
        assert may_name_loopc(doc.encode()), doc


def test_a_pyproject_without_a_loopc_key_is_skipped() -> None:
    for doc in ('[project]\nname = "loopc-plans"\n', "# configure loopc here\n", '[tool.ruff]\nx = "see loopc docs"\n', ""):
        assert not may_name_loopc(doc.encode()), doc
