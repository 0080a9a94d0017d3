"""One defect, one diagnostic (docs/architecture.md; docs/language.md
"One defect, one diagnostic"): the follow-on-suppression policy of
:mod:`loopc.compiler.report`, and each cascade class it closes, tried on
every example rather than on one hand-picked plan."""

from __future__ import annotations

import pathlib
import random
import re
from collections import Counter

import pytest

import defects
import loopc
from loopc.compiler.report import Reporter, decl, decl_path, edge_entity, node_entity, scope_entity
from loopc.diagnostics import Span

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
IDS = [p.stem for p in EXAMPLES]


def _codes(src: str) -> list[str]:
    return [d.code for d in loopc.check_source(src).diagnostics]


# -- the policy ---------------------------------------------------------------


def test_exact_duplicates_are_reported_once() -> None:
    r = Reporter()
    at = Span(3, 1, 3, 5)
    assert r.report("LP2007", at, "unknown key 'x'") is not None
    assert r.report("LP2007", at, "unknown key 'x'") is None
    assert r.report("LP2007", at, "unknown key 'y'") is not None
    assert [d.message for d in r.diagnostics] == ["unknown key 'x'", "unknown key 'y'"]


def test_a_coarser_identity_reports_once_per_key() -> None:
    r = Reporter()
    assert r.report("LP4308", Span(1, 1, 1, 2), "first", key=("f",)) is not None
    assert r.report("LP4308", Span(2, 1, 2, 2), "second", key=("f",)) is None
    assert r.report("LP4309", Span(2, 1, 2, 2), "other code", key=("f",)) is not None


def test_a_tainted_entity_silences_what_depends_on_it() -> None:
    r = Reporter()
    r.report("LP2007", None, "unknown key 'inptu'", taints=[decl("/input")])
    assert r.tainted(decl_path("input")) and r.tainted(decl_path("input", "topic"))
    assert not r.tainted(decl_path("output"))
    assert r.report("LP3304", None, "entry needs topic", needs=[decl_path("input", "topic")]) is None
    assert r.report("LP3302", None, "no field", needs=[decl_path("output", "x")]) is not None


def test_culprit_nodes_and_edges_are_dependencies() -> None:
    r = Reporter()
    r.taint(node_entity("ask"), edge_entity("e1"))
    assert r.report("LP4005", None, "port", node="ask") is None
    assert r.report("LP4004", None, "edge", edge="e1") is None
    assert r.report("LP4005", None, "port", node="other") is not None
    assert r.tainted_names("node") == {"ask"} and r.tainted_names("edge") == {"e1"}


def test_warnings_taint_nothing_and_suppressed_errors_still_taint() -> None:
    r = Reporter()
    r.report("LP4310", None, "a warning", taints=[scope_entity("f")])
    assert not r.tainted(scope_entity("f", "a"))
    r.taint(node_entity("j"))
    assert r.report("LP4301", None, "about a rejected node", node="j", taints=[scope_entity("f")]) is None
    assert r.tainted(scope_entity("f", "a"))


def test_a_diagnostic_never_silences_itself() -> None:
    r = Reporter()
    assert r.report("LP2007", None, "x", taints=[decl("/a")], needs=[decl("/a")]) is not None


# -- cascade classes on every example -----------------------------------------


def _sections(text: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^([A-Za-z]+):", text, re.M)]


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_any_misspelt_top_level_key_is_one_diagnostic(path: pathlib.Path) -> None:
    text = path.read_text()
    assert _sections(text)
    for key, bad in defects.top_level_key_misspelt(text):
        assert _codes(bad) == ["LP2007"], (key, _codes(bad))


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_an_unknown_type_in_a_top_level_contract_is_one_diagnostic(path: pathlib.Path) -> None:
    text = path.read_text()
    lines = text.splitlines(keepends=True)
    section = None
    for i, line in enumerate(lines):
        m = re.match(r"^([A-Za-z]+):", line)
        if m:
            section = m.group(1)
            continue
        if section in ("input", "output", "state") and re.match(r"^  [a-z_]+: \{type: [a-z_]+", line):
            bad = "".join(lines[:i]) + re.sub(r"type: [a-z_]+", "type: user", line, count=1) + "".join(lines[i + 1 :])
            assert _codes(bad) == ["LP2020"], (section, line.strip(), _codes(bad))


#: Conditionally required keys: required only when another key is absent
#: or has a certain value (LP2033, LP2040, LP2043, LP2045, LP2050, LP2060).
CONDITIONAL = ("callbackOutput", "workScope", "forkId", "fanOutId", "condition", "duration", "target", "scope")


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_a_misspelt_conditionally_required_key_is_one_diagnostic(path: pathlib.Path) -> None:
    text = path.read_text()
    for key in CONDITIONAL:
        for m in re.finditer(rf"^(\s+){key}:", text, re.M):
            for wrong in (key[:-1] + key[-1].upper(), key[:3] + key[4:]):
                bad = text[: m.start()] + m.group(1) + wrong + ":" + text[m.end() :]
                got = loopc.check_source(bad).diagnostics
                assert [d.code for d in got] == ["LP2007"], (wrong, [(d.code, d.message) for d in got])
                assert got[0].fix is not None and f"did you mean '{key}'" in got[0].message


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_a_join_naming_a_non_fork_is_one_diagnostic(path: pathlib.Path) -> None:
    text = path.read_text()
    m = re.search(r"^(\s+)forkId: ([a-z_]+)", text, re.M)
    if m is None:
        pytest.skip("no fork join")
    ids = re.findall(r"^  - id: ([a-z_]+)\n    type: (\w+)", text, re.M)
    for nid, kind in ids:
        if kind in ("fork", "join") or nid == m.group(2):
            continue
        if kind == "switch" and re.search(rf"id: {nid}\n(?:    .*\n)*?      mode: all_match", text):
            continue
        bad = text[: m.start(2)] + nid + text[m.end(2) :]
        assert _codes(bad) == ["LP4301"], (nid, kind, _codes(bad))
    bad = text[: m.start(2)] + "zzz_nothing" + text[m.end(2) :]
    assert _codes(bad) == ["LP4312"], _codes(bad)


# -- set-aside objects and rules that restate one fact (issue 14 §2) -----------
#
# Each test below makes one authoring mistake everywhere it can be made in
# every example and asserts the single root diagnostic.

_EDGE = re.compile(r"^  - id: (\w+)\n(?:    .*\n|      .*\n)*", re.M)
_NODE_ID = re.compile(r"^  - id: ([a-z_]+)\n    type: (\w+)", re.M)


def _edges(text: str) -> list[re.Match[str]]:
    """Every block-style edge of ``text`` (the examples' edge style)."""
    start = text.index("\nedges:\n")
    return [m for m in _EDGE.finditer(text, start) if "    from:" in m.group(0)]


def _diags(src: str) -> list[tuple[str, str]]:
    return [(d.code, d.message) for d in loopc.check_source(src).diagnostics]


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_a_join_naming_its_owner_with_the_wrong_key_is_one_diagnostic(path: pathlib.Path) -> None:
    text = path.read_text()
    hits = list(defects.join_owner_key_swapped(text))
    if not hits:
        pytest.skip("no join")
    for key, bad in hits:
        got = loopc.check_source(bad).diagnostics
        assert [d.code for d in got] == ["LP4311"], (key, _diags(bad))
        (e,) = got[0].fix.edits
        assert bad[: e.span.start] + e.new_text + bad[e.span.end :] == text


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_a_misspelt_or_missing_enum_values_is_one_diagnostic(path: pathlib.Path) -> None:
    text = path.read_text()
    hits = list(re.finditer(r"type: enum, (values): \[[a-z0-9_, ]+\],? ?", text))
    if not hits:
        pytest.skip("no enum field")
    for m in hits:
        for wrong in ("valeus", "value", "vaules"):
            bad = text[: m.start(1)] + wrong + text[m.end(1) :]
            assert _codes(bad) == ["LP2007"], (wrong, m.group(0), _diags(bad))
        bad = text[: m.start(1)] + text[m.end(0) :]
        assert _codes(bad) == ["LP2021"], (m.group(0), _diags(bad))


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_a_deleted_edge_is_one_diagnostic(path: pathlib.Path) -> None:
    """Deleting the only edge of a port that must be routed is one LP4005 at
    that port (LP4008 when it was a loop body's way back to `continue`):
    what the edge led to is not also unreachable (LP4006), the branch it
    continued does not also miss its join (LP4310), and what it wrote is not
    judged missing (LP4603, LP4702)."""
    text = path.read_text()
    tried = 0
    for m in _edges(text):
        bad = text[: m.start()] + text[m.end() :]
        got = _codes(bad)
        if got == [] or got == ["LP4006"]:
            continue  # an optional port (failed, timed_out...): only what it led to is cut off
        tried += 1
        assert got in (["LP4005"], ["LP4008"]), (m.group(1), _diags(bad))
    assert tried


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_a_second_edge_on_a_port_is_one_diagnostic(path: pathlib.Path) -> None:
    """A second edge leaving a used port, to any other node, is one LP4004;
    the extra edge is set aside (no merge, bind or scope finding on it)."""
    text = path.read_text()
    edges = _edges(text)
    nodes = [nid for nid, kind in _NODE_ID.findall(text)]
    for m in edges:
        src = re.search(r"    from: (\{node: \w+, port: \w+\})", m.group(0))
        dst = re.search(r"    to: \{node: (\w+)", m.group(0))
        assert src and dst
        for target in nodes:
            if target == dst.group(1) or target == nodes[0]:
                continue
            extra = f"  - {{id: e_extra, from: {src.group(1)}, to: {{node: {target}}}}}\n"
            bad = text[: m.end()] + extra + text[m.end() :]
            assert _codes(bad) == ["LP4004"], (m.group(1), target, _diags(bad))


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_a_loop_exit_into_in_is_one_diagnostic(path: pathlib.Path) -> None:
    text = path.read_text()
    hits = list(defects.loop_exit_into_in(text))
    if not hits:
        pytest.skip("no loop")
    for loop, bad in hits:
        got = loopc.check_source(bad).diagnostics
        assert [d.code for d in got] == ["LP4008"], (loop, _diags(bad))
        (e,) = got[0].fix.edits
        assert _codes(bad[: e.span.start] + e.new_text + bad[e.span.end :]) == []


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_a_duplicate_node_id_is_one_diagnostic_with_the_right_fix(path: pathlib.Path) -> None:
    """A node given the id of an earlier node (a copy not renamed) is one
    LP2030, whose fix gives it back the id its edges use."""
    text = path.read_text()
    ids = list(_NODE_ID.finditer(text))
    for i, m in enumerate(ids[1:], 1):
        for prev in ids[:i]:
            bad = text[: m.start(1)] + prev.group(1) + text[m.end(1) :]
            got = loopc.check_source(bad).diagnostics
            assert [d.code for d in got] == ["LP2030"], (m.group(1), prev.group(1), _diags(bad))
            (e,) = got[0].fix.edits
            assert e.new_text == m.group(1)
            assert bad[: e.span.start] + e.new_text + bad[e.span.end :] == text


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_a_misspelt_edge_key_is_one_diagnostic(path: pathlib.Path) -> None:
    """A misspelt ``from``/``to`` sets the edge aside: one LP2007, and no
    graph or scope finding about the branch it would have continued."""
    text = path.read_text()
    for m in _edges(text):
        for key, wrong in (("from", "form"), ("from", "frm"), ("to", "too"), ("to", "ot"), ("to", "tp")):
            k = m.group(0).index(f"    {key}:")
            at = m.start() + k + 4
            bad = text[:at] + wrong + text[at + len(key) :]
            assert _codes(bad) == ["LP2007"], (m.group(1), wrong, _diags(bad))


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_a_misspelt_array_items_is_one_diagnostic(path: pathlib.Path) -> None:
    text = path.read_text()
    hits = list(re.finditer(r"type: array, required: (?:true|false), (items):", text))
    if not hits:
        pytest.skip("no array field")
    for m in hits:
        bad = text[: m.start(1)] + "itmes" + text[m.end(1) :]
        assert _codes(bad) == ["LP2007"], (m.group(0), _diags(bad))
@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_a_rejected_required_or_default_is_one_diagnostic(path: pathlib.Path) -> None:
    """Whether a field may be absent is unknown once its ``required`` or
    ``default`` is rejected: nothing that depends on it (LP3307, LP3304,
    LP3301, a null comparison, the switch prover's domain) is reported."""
    text = path.read_text()
    for m in re.finditer(r"required: (true|false)", text):
        bad = text[: m.start()] + ("required: yes" if m.group(1) == "true" else "required: off") + text[m.end() :]
        assert _codes(bad) == ["LP2012"], (text.count("\n", 0, m.start()) + 1, _codes(bad))
    for m in re.finditer(r"\{type: (string|number|boolean|member|scope)(, required: (true|false))?(?![^}\n]*default:)", text):
        bad = text[: m.end()] + ", default: [1]" + text[m.end() :]
        assert _codes(bad) == ["LP2024"], (text.count("\n", 0, m.start()) + 1, _codes(bad))


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_an_unquoted_template_is_one_diagnostic_with_the_quoting_fix(path: pathlib.Path) -> None:
    """``text: {{ input.x }}`` is a mapping with a mapping key to YAML: one
    LP1008 saying to quote it (no LP2012 about the value's shape), and its fix
    gives back the plan with the template quoted."""
    text = path.read_text()
    for m in re.finditer(r'"[^"\n]*?(\{\{[^}"\n]*\}\})[^"\n]*"', text):
        bad = text[: m.start()] + m.group(1) + text[m.end() :]
        got = loopc.check_source(bad).diagnostics
        assert [d.code for d in got] == ["LP1008"], [(d.code, d.message) for d in got]
        assert "quote" in got[0].message and got[0].fix is not None
        (edit,) = got[0].fix.edits
        assert edit.span.start == m.start() and edit.span.end == m.start() + len(m.group(1))
        fixed = bad[: edit.span.start] + edit.new_text + bad[edit.span.end :]
        assert _codes(fixed) == [], _codes(fixed)


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_a_rejected_case_condition_is_no_claim_of_the_switch_prover(path: pathlib.Path) -> None:
    """A case whose ``when`` the type pass rejected (here: a required field
    compared with null, LP3027) is left out of the prover: no later case is
    reported shadowed by it (LP4201), nor the default unreachable (LP4202)."""
    text = path.read_text()
    for m in re.finditer(r'when: "[^"\n]*?((run\.)?input\.[a-z_]+)[^"\n]*"', text):
        bad = text[: m.start()] + f'when: "{m.group(1)} != null"' + text[m.end() :]
        assert _codes(bad) == ["LP3027"], (text.count("\n", 0, m.start()) + 1, _codes(bad))


_NODE_BLOCK = re.compile(r"^  - id: ([a-z_]+)\n    type: (\w+)\n(?:(?:    |      ).*\n|\n)*", re.M)


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_a_deleted_node_is_one_diagnostic(path: pathlib.Path) -> None:
    """Deleting a node (not the entry) that edges name is one LP4002 at the
    first edge naming it, the others related; no LP4007 for a succeeded End
    the missing node may have been.  A did-you-mean, when there is one,
    names a node that fits every edge: applying its fix makes no
    unknown-port (LP4003) or second-edge (LP4004) error."""
    from loopc.lint.fixes import apply_fixes

    text = path.read_text()
    entry = re.search(r"^entry: (\w+)", text, re.M).group(1)
    for m in _NODE_BLOCK.finditer(text):
        nid = m.group(1)
        if nid == entry:
            continue
        bad = text[: m.start()] + text[m.end() :]
        got = loopc.check_source(bad).diagnostics
        assert [d.code for d in got] == ["LP4002"], (nid, _diags(bad))
        (d,) = got
        named = len(re.findall(rf"\{{node: {nid}[,}}]", text))
        assert len(d.related) == named - 1 and d.message.count(f"`{nid}`") == 1, (nid, d.message)
        if named > 1:
            assert f"{named} edges name it" in d.message, d.message
        if d.fix is not None:
            fixed, _ = apply_fixes(bad, [d], unsafe=True)
            assert not {"LP4003", "LP4004"} & set(_codes(fixed)), (nid, d.message, _diags(fixed))


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_a_misspelt_node_id_is_one_diagnostic_whose_fix_checks_clean(path: pathlib.Path) -> None:
    """A node whose own id is misspelt (two letters swapped; its edges keep
    the id) is one LP4002: the edges name a node that is not there, the
    misspelt node fits them all, and the fix renames every edge to it."""
    from loopc.lint.fixes import apply_fixes

    text = path.read_text()
    entry = re.search(r"^entry: (\w+)", text, re.M).group(1)
    for m in _NODE_ID.finditer(text):
        nid = m.group(1)
        if nid == entry or re.search(rf"(forkId|fanOutId): {nid}\b", text) or len(nid) < 4:
            continue
        i = next(i for i in range(1, len(nid) - 1) if nid[i] != nid[i + 1])
        wrong = nid[:i] + nid[i + 1] + nid[i] + nid[i + 2 :]
        bad = text[: m.start(1)] + wrong + text[m.end(1) :]
        got = loopc.check_source(bad).diagnostics
        assert [d.code for d in got] == ["LP4002"], (nid, _diags(bad))
        assert f"did you mean `{wrong}`?" in got[0].message, got[0].message
        fixed, n = apply_fixes(bad, got, unsafe=True)
        assert n == 1 and _codes(fixed) == [], (nid, _diags(fixed))


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_an_unconnected_node_is_one_diagnostic(path: pathlib.Path) -> None:
    """A copy of any node (a join excepted: its owner activates it) that no
    edge leads to or leaves is one LP4006 saying it is not connected: its
    ports are not also unrouted (LP4005), a loop copy does not also miss its
    ``continue`` edge (LP4008), and nothing in it is analysed."""
    text = path.read_text()
    blocks = list(_NODE_BLOCK.finditer(text))
    for m in blocks:
        nid, kind = m.group(1), m.group(2)
        if kind == "join":
            continue
        copy = m.group(0).replace(f"id: {nid}\n", f"id: {nid}_copy\n", 1)
        bad = text[: blocks[-1].end()] + copy + text[blocks[-1].end() :]
        got = loopc.check_source(bad).diagnostics
        assert [d.code for d in got] == ["LP4006"], (nid, _diags(bad))
        if kind != "end":
            assert got[0].message.startswith(f"{kind} `{nid}_copy` is not connected"), got[0].message


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
@pytest.mark.slow
def test_a_key_with_two_letters_swapped_is_one_diagnostic(path: pathlib.Path) -> None:
    """Any key of the syntax with two adjacent letters swapped (``ot``,
    ``di``, ``prot``) is one LP2007 with the did-you-mean: the key is not
    also missing (LP2006), a node or edge set aside keeps the id, endpoints
    and ports its misspelt key gives (no LP4001, LP4002, LP4005, LP4008)."""
    text = path.read_text()
    for key, bad in defects.key_letters_swapped(text):
        got = loopc.check_source(bad).diagnostics
        assert [d.code for d in got] == ["LP2007"], (key, _diags(bad))
        assert f"did you mean '{key}'" in got[0].message and got[0].fix is not None
# -- type/state/schema findings of the second new-user trial (issue 14 §2, §3) --

_NODE_TYPE = re.compile(r"^  - id: ([a-z_]+)\n    type: (\w+)\n", re.M)


def _apply(src: str, fix: object) -> str:
    for e in sorted(fix.edits, key=lambda e: e.span.start, reverse=True):  # type: ignore[attr-defined]
        src = src[: e.span.start] + e.new_text + src[e.span.end :]
    return src


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
@pytest.mark.slow
def test_a_wrong_node_type_is_one_diagnostic_at_the_type(path: pathlib.Path) -> None:
    """A node whose ``type`` names another kind while its config is a valid
    config of its own kind is one LP2032 at the ``type``, whose fix gives the
    type back; a fix is offered only when applying it checks clean (the
    trial's wrong fix renamed the config key instead)."""
    from loopc.kinds import KINDS

    text = path.read_text()
    tried = 0
    for m in _NODE_TYPE.finditer(text):
        for other in KINDS:
            if other == m.group(2):
                continue
            bad = text[: m.start(2)] + other + text[m.end(2) :]
            got = loopc.check_source(bad).diagnostics
            assert [d.code for d in got] == ["LP2032"], (m.group(1), other, _diags(bad))
            if got[0].fix is None:
                continue
            fixed = _apply(bad, got[0].fix)
            assert _codes(fixed) == [], (m.group(1), other, got[0].message, _diags(fixed))
            if got[0].span.start == m.start(2):
                assert fixed == text
                tried += 1
    if _NODE_TYPE.search(text):
        assert tried, "no wrong type was blamed on the type"


def test_a_foreign_config_key_is_renamed_only_when_its_body_fits_the_type() -> None:
    """LP2032's rename fix (``sendMessage:`` → ``wait:`` on a wait node) is
    offered only when the body is a config of the declared type; applying it
    gives back the plan.  A body that fits neither kind gets no fix."""
    from loopc.codes import get

    ok = get("LP2032").fixed
    bad = ok.replace("    wait:\n", "    sendMessage:\n", 1)
    (d,) = loopc.check_source(bad).diagnostics
    assert d.code == "LP2032" and d.fix is not None and "wait" in d.fix.message
    assert _apply(bad, d.fix) == ok
    neither = bad.replace("      duration: PT5M\n", "      duration: PT5M\n      text: hi\n", 1)
    (d,) = loopc.check_source(neither).diagnostics
    assert d.code == "LP2032" and d.fix is None


_JOIN_INPUT = re.compile(r"^  - id: (\w+)\n    type: join\n    input:\n((?:      .*\n)+)    join:\n      forkId: (\w+)", re.M)


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_an_optional_join_input_field_merged_into_a_required_result_is_one_diagnostic(path: pathlib.Path) -> None:
    """A fork join's ``input`` field made optional, while the merge puts
    ``branches.<key>.<field>`` into a required result field, is one LP3307 at
    that input field (not one per merge, and not the all_match reason)."""
    text = path.read_text()
    tried = 0
    for m in _JOIN_INPUT.finditer(text):
        if f"  - id: {m.group(3)}\n    type: fork\n" not in text:
            continue
        for f in re.finditer(r"^      (\w+): \{type: \w+, (required: true)\}", m.group(2), re.M):
            if not re.search(rf"branches\.\w+\.{f.group(1)}\b", text[m.end() :]):
                continue
            at = m.start(2) + f.start(2)
            bad = text[:at] + "required: false" + text[at + len(f.group(2)) :]
            got = loopc.check_source(bad).diagnostics
            assert [d.code for d in got] == ["LP3307"], (m.group(1), f.group(1), _diags(bad))
            assert got[0].span.start == m.start(2) + f.start(1), got[0].message
            assert "all_match" not in got[0].message and f"input of join `{m.group(1)}`" in got[0].message
            tried += 1
    if not tried:
        pytest.skip("no fork join merging its input")


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_a_config_key_dedented_to_node_level_is_one_diagnostic(path: pathlib.Path) -> None:
    """The last key of a block configuration dedented to node level (valid
    YAML, wrong place) is one LP2007 at that key, saying it belongs under the
    configuration (no "missing key" about the configuration), and its fix
    indents it back."""
    text = path.read_text()
    tried = 0
    for key, bad in defects.config_key_dedented(text):
        got = loopc.check_source(bad).diagnostics
        assert [d.code for d in got] == ["LP2007"], (key, _diags(bad))
        assert f"'{key}' belongs under" in got[0].message
        assert got[0].fix is not None and _apply(bad, got[0].fix) == text
        tried += 1
    assert tried


#: Plans with Run state: the examples, and the wait-ordered fork the race
#: rule is built around (a wait beside concurrent writes).
STATEFUL = [p for p in EXAMPLES if "\nstate:\n" in p.read_text()] + [
    ROOT / "tests" / "fixtures" / "analysis" / "state_race_wait_ok.yaml"]
STATEFUL_IDS = [p.stem for p in STATEFUL]


@pytest.mark.parametrize("path", STATEFUL, ids=STATEFUL_IDS)
def test_a_state_field_without_default_is_one_diagnostic(path: pathlib.Path) -> None:
    """A Run-state field whose ``default`` is deleted is one LP2026: what the
    field starts as is unknown, so nothing that rests on it (an optional
    source, LP3307; the wait rule of a race, LP4601; LP4604) is reported."""
    text = path.read_text()
    tried = 0
    for m in re.finditer(r"^  \w+: \{type: [^\n]*?(, default: [^}\n]+)\}$", text[text.index("\nstate:\n") :], re.M):
        at = text.index("\nstate:\n") + m.start(1)
        bad = text[:at] + text[at + len(m.group(1)) :]
        assert _codes(bad) == ["LP2026"], (m.group(0), _diags(bad))
        tried += 1
    assert tried


@pytest.mark.parametrize("path", STATEFUL, ids=STATEFUL_IDS)
def test_an_unparsable_wait_condition_is_one_diagnostic(path: pathlib.Path) -> None:
    """A wait condition written as a template (``"{{ ... }}"``) does not
    parse: one LP3001, and nothing reasons about what it would say (no race
    for want of an ordering, no LP4603/LP4604)."""
    text = path.read_text()
    hits = list(re.finditer(r'condition: "([^"\n]+)"', text))
    if not hits:
        pytest.skip("no wait condition")
    for m in hits:
        bad = text[: m.start(1)] + "{{ " + m.group(1) + " }}" + text[m.end(1) :]
        assert _codes(bad) == ["LP3001"], (m.group(1), _diags(bad))


@pytest.mark.parametrize("path", STATEFUL, ids=STATEFUL_IDS)
def test_a_misspelt_assignment_is_one_diagnostic(path: pathlib.Path) -> None:
    """A set_variable ``assign`` key misspelt is one LP3302 with the rename
    fix: that write is unknown, so no wait is said to watch a field nothing
    writes (LP4603)."""
    text = path.read_text()
    tried = 0
    for blk in re.finditer(r"assign:(?: \{([^\n]*)\}\n|\n((?:        .*\n)+))", text):
        start = blk.start(1) if blk.group(1) is not None else blk.start(2)
        body = blk.group(1) if blk.group(1) is not None else blk.group(2)
        keys = r"^(\w+):" if blk.group(1) is not None else r"^        (\w+):"  # flow: its first key
        for k in re.finditer(keys, body, re.M):
            key = k.group(1)
            at = start + k.start(1)
            bad = text[:at] + key[:-1] + text[at + len(key) :]
            got = loopc.check_source(bad).diagnostics
            assert [d.code for d in got] == ["LP3302"], (key, _diags(bad))
            assert got[0].fix is not None and _apply(bad, got[0].fix) == text
            tried += 1
    if not tried:
        pytest.skip("no set_variable")


# -- messages and fixes of the trial (issue 14 §3) ------------------------------


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_a_single_equals_in_an_expression_is_one_diagnostic_with_the_fix(path: pathlib.Path) -> None:
    """``a = b`` for ``a == b`` in any expression or template is one LP3001
    whose (unsafe) fix writes ``==`` and gives back the plan."""
    text = path.read_text()
    hits = [m for m in re.finditer(r"(?<=[^=!<>])==(?=[^=])", text)]
    if not hits:
        pytest.skip("no comparison")
    for m in hits:
        bad = text[: m.start()] + "=" + text[m.end() :]
        got = loopc.check_source(bad).diagnostics
        assert [d.code for d in got] == ["LP3001"], _diags(bad)
        assert got[0].fix is not None and got[0].fix.applicability.value == "unsafe"
        assert _apply(bad, got[0].fix) == text


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
@pytest.mark.slow
def test_a_yaml_1_1_boolean_has_the_safe_fix(path: pathlib.Path) -> None:
    """``required: yes`` (a string under YAML 1.2), and any plain boolean
    written as a YAML 1.1 word where a boolean is required (a default, a bound
    value, an assignment, ``startThread``), is one diagnostic whose safe fix
    writes the boolean YAML 1.1 meant, giving back the plan."""
    text = path.read_text()
    for _meant, bad in defects.yaml11_boolean(text):
        got = loopc.check_source(bad).diagnostics
        assert len(got) == 1 and got[0].code in ("LP2012", "LP2024", "LP3303", "LP3401"), _diags(bad)
        assert got[0].fix is not None and got[0].fix.applicability.value == "safe"
        assert _apply(bad, got[0].fix) == text


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("2026-02-30T09:00:00Z", "February 2026 has 28 days, so day 30 does not exist"),
        ("2023-02-29T09:00:00Z", "February 2023 has 28 days, so day 29 does not exist"),
        ("2024-04-31T09:00:00Z", "April 2024 has 30 days, so day 31 does not exist"),
        ("2024-13-01T09:00:00Z", "month 13 does not exist"),
        ("2024-01-01T24:00:00Z", "hour 24 does not exist"),
        ("2024-01-01T09:00:00+24:00", "the offset +24:00 does not exist"),
    ],
)
def test_an_impossible_datetime_says_which_part_does_not_exist(value: str, why: str) -> None:
    """A date-time of the right shape naming a day, hour or offset that does
    not exist says which (not "expected an RFC 3339 date-time with an
    offset", which it has), in a default and in a bound value alike."""
    from loopc.codes.schema import OK
    from loopc.compiler import types as T

    src = OK.replace("input: {}", f"input:\n  due: {{type: datetime, default: '{value}'}}", 1)
    (d,) = loopc.check_source(src).diagnostics
    assert d.code == "LP2024" and why in d.message and "expected an RFC 3339" not in d.message, d.message
    assert _codes(src.replace(value, "2024-02-29T09:00:00Z")) == []
    said = T.wire_form_error(value, T.DATETIME)
    assert said is not None and why in said, said


def test_a_responder_bound_into_an_agent_field_says_to_declare_responder() -> None:
    """``item.responder`` bound into an ``agent`` input field: the message
    says to declare the field ``responder`` (agent widens to responder, never
    back), and declaring it so checks clean."""
    text = (ROOT / "examples" / "planner_fan_out.yaml").read_text()
    m = re.search(r"^(\s+)(\w+): \{type: responder, required: true\}", text, re.M)
    assert m is not None
    bad = text[: m.start()] + m.group(1) + m.group(2) + ": {type: agent, required: true}" + text[m.end() :]
    (d,) = loopc.check_source(bad).diagnostics
    assert d.code == "LP3303" and "declare the field `{type: responder}`" in d.message, d.message
    assert _codes(text) == []


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_an_unclosed_bracket_in_an_expression_is_reported_at_the_bracket(path: pathlib.Path) -> None:
    """A `(` or `[` opened in a condition and never closed: one LP3001 at that
    bracket (not at the end of the expression), whose fix inserts the closing
    bracket at the end and gives back a plan that checks clean."""
    text = path.read_text()
    assert _codes(text) == []
    found = 0
    for m in re.finditer(r'(when|condition): "([^"\n]+)"', text):
        for opener in "(":  # a '[' around a condition would make it a list
            found += 1
            at = m.start(2)
            bad = text[:at] + opener + text[at:]
            got = loopc.check_source(bad).diagnostics
            assert [d.code for d in got] == ["LP3001"], [(d.code, d.message) for d in got]
            (d,) = got
            assert d.span is not None and d.span.start == at and "never closed" in d.message
            assert d.fix is not None
            (edit,) = d.fix.edits
            assert edit.span.start == edit.span.end == m.end(2) + 1
            fixed = bad[: edit.span.start] + edit.new_text + bad[edit.span.end :]
            assert _codes(fixed) == [], _codes(fixed)
    if "when:" in text:
        assert found

@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_an_interpolation_left_open_before_the_next_is_one_diagnostic(path: pathlib.Path) -> None:
    """Deleting the ``}}`` of an interpolation that another one follows
    (``{{ a ({{ b }})``): one LP3005 at the ``{{`` left open, naming it,
    not an LP3001 about what the merged expression calls."""
    text = path.read_text()
    found = 0
    for m in re.finditer(r"\{\{[^{}\n]*?\}\}(?=[^\n]*\{\{)", text):
        found += 1
        close = m.end() - 2
        bad = text[:close] + text[m.end():]
        got = loopc.check_source(bad).diagnostics
        assert [d.code for d in got] == ["LP3005"], [(d.code, d.message) for d in got]
        (d,) = got
        assert d.span is not None and d.span.start == m.start() and "not closed" in d.message
    if text.count("{{") > 1 and re.search(r"\}\}[^\n]*\{\{", text):
        assert found


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_a_node_id_breaking_the_identifier_rule_is_one_diagnostic(path: pathlib.Path) -> None:
    """A node id written with a dash or capitals (``legal-review``,
    ``Legal_review``) while the edges name ``legal_review``: one LP2014 whose
    fix renames the id to the spelling the edges use, not also an LP4002 for
    every edge naming it."""
    text = path.read_text()
    found = 0
    edges_at = text.index("\nedges:")
    for m in re.finditer(r"^  - id: ([a-z][a-z0-9_]*)$", text, re.M):
        nid = m.group(1)
        if m.start() > edges_at:
            break
        for bad_id in {nid.replace("_", "-"), nid[0].upper() + nid[1:]} - {nid}:
            found += 1
            bad = text[: m.start(1)] + bad_id + text[m.end(1) :]
            got = loopc.check_source(bad).diagnostics
            assert [d.code for d in got] == ["LP2014"], [(d.code, d.message) for d in got]
            (d,) = got
            assert f"'{nid}'" in d.message and d.fix is not None
            (edit,) = d.fix.edits
            fixed = bad[: edit.span.start] + edit.new_text + bad[edit.span.end :]
            assert fixed == text
    assert found


_SUCCEEDED_END = re.compile(
    r"^  - id: (\w+)\n    type: end\n(?:    input:\n(?:      .*\n)*)?    end: \{status: succeeded", re.M)


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_a_branch_routed_to_a_succeeded_end_orphans_nothing(path: pathlib.Path) -> None:
    """Any edge rerouted to a succeeded End from inside a scope is one LP4101
    at that edge: the node it used to reach (a join's failure End, the rest
    of the branch) is its probable target, not also unreachable (LP4006)."""
    text = path.read_text()
    ends = _SUCCEEDED_END.findall(text)
    seen = 0
    for m in re.finditer(r"    to: \{node: (\w+)\}", text):
        for end in ends:
            if m.group(1) == end:
                continue
            got = _codes(text[: m.start(1)] + end + text[m.end(1) :])
            if "LP4101" in got:
                seen += 1
                assert "LP4006" not in got, got
    if any(k in text for k in ("type: fork", "mode: all_match")):
        assert seen


# -- scope-structure mistakes on random well-nested plans (issue 14 §2) --------
#
# The examples hold one parallel scope each; these classes need two, so they
# are tried on the oracle's well-nested plans (tests/explorer.py), every
# place the mistake can be made, against the plan's own findings (its
# warnings stay as they are).

SEEDS = range(40)


def _nested(seed: int) -> tuple[list[dict], list[dict], str]:
    from explorer import PlanGen

    return PlanGen(random.Random(seed), 14).build()


def _extra(nodes: list[dict], edges: list[dict], entry: str, base: Counter[str]) -> list[str]:
    """The findings of the (mutated) plan beyond ``base``, the unmutated plan's."""
    from explorer import emit_yaml, front

    return sorted((Counter(front(emit_yaml(nodes, edges, entry)).codes) - base).elements())


def _owners(nodes: list[dict]) -> dict[str, str]:
    """Scope owner id -> the join key that names it."""
    out = {}
    for n in nodes:
        if n["type"] == "fork" or n["type"] == "switch" and n["switch"].get("mode") == "all_match":
            out[n["id"]] = "forkId"
        elif n["type"] == "fan_out":
            out[n["id"]] = "fanOutId"
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_a_join_naming_another_joined_owner_is_one_diagnostic(seed: int) -> None:
    """A join whose `forkId`/`fanOutId` names another scope that has its own
    join is one LP4309 (LP4402 for fan-outs) with the fix naming the scope its
    arrivals come from: the scope left without a join is not also reported
    (LP4308, LP4401), nor each arrival from outside the named owner (LP4302)."""
    nodes, edges, entry = _nested(seed)
    base = Counter(_extra(nodes, edges, entry, Counter()))
    owners = _owners(nodes)
    joined = {n["join"].get("forkId") or n["join"].get("fanOutId") for n in nodes if n["type"] == "join"}
    for j in (n for n in nodes if n["type"] == "join"):
        key = "forkId" if "forkId" in j["join"] else "fanOutId"
        mine = j["join"][key]
        for other, k in owners.items():
            if k != key or other == mine or other not in joined:
                continue
            j["join"][key] = other
            got = _extra(nodes, edges, entry, base)
            j["join"][key] = mine
            assert got == (["LP4402"] if key == "fanOutId" else ["LP4309"]), (j["id"], other, got)


@pytest.mark.parametrize("seed", SEEDS)
def test_an_arrival_at_another_scopes_join_is_one_diagnostic(seed: int) -> None:
    """An edge into a join retargeted to the join of another scope (one
    that does not lead back to the edge: that is a cycle) is one error at
    the edge (LP4302, LP4304, LP4404 or LP4503, by what the token leaves):
    the branch it leaves is not also "never reaches its join" (LP4310)."""
    import networkx as nx

    nodes, edges, entry = _nested(seed)
    base = Counter(_extra(nodes, edges, entry, Counter()))
    joins = [n["id"] for n in nodes if n["type"] == "join"]
    g = nx.DiGraph([(e["from"]["node"], e["to"]["node"]) for e in edges])
    for e in edges:
        to = e["to"]
        if to["node"] not in joins:
            continue
        for other in joins:
            if other == to["node"] or nx.has_path(g, other, e["from"]["node"]):
                continue
            e["to"] = {"node": other}
            got = _extra(nodes, edges, entry, base)
            e["to"] = to
            assert len(got) == 1 and got[0] in ("LP4302", "LP4304", "LP4404", "LP4503"), (e["id"], other, got)


def _opens(node: dict, port: str) -> bool:
    """Does leaving ``node`` through ``port`` open a scope?"""
    t = node["type"]
    if t == "fork" or t == "switch" and node["switch"].get("mode") == "all_match":
        return True
    return t == "fan_out" and port == "item" or t == "loop" and port == "body"


@pytest.mark.parametrize("seed", SEEDS)
def test_an_edge_rerouted_from_a_scope_owner_into_its_scope_is_one_diagnostic(seed: int) -> None:
    """The only edge into a fork, all_match switch, fan_out or loop rerouted
    to a node the owner's opening port leads to is one LP4307 (LP4403 for an
    item body) at that edge: the owner it no longer reaches, and what only
    the owner leads to, are not also unreachable (LP4006), nor a loop's back
    edges from outside its body (LP4504)."""
    nodes, edges, entry = _nested(seed)
    base = Counter(_extra(nodes, edges, entry, Counter()))
    by_id = {n["id"]: n for n in nodes}
    for e in edges:
        to = e["to"]
        owner = by_id[to["node"]]
        if to.get("port", "in") != "in" or sum(1 for x in edges if x["to"] == to) != 1:
            continue
        for o in edges:
            if o["from"]["node"] != owner["id"] or not _opens(owner, o["from"]["port"]):
                continue
            e["to"] = {"node": o["to"]["node"]}
            got = _extra(nodes, edges, entry, base)
            e["to"] = to
            assert got == (["LP4403"] if owner["type"] == "fan_out" else ["LP4307"]), (e["id"], o["to"], got)


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_a_misspelt_source_port_is_one_diagnostic(path: pathlib.Path) -> None:
    """A misspelt ``from.port`` is one LP4003: for a scope owner (a loop's
    ``body``, a fan_out's ``item``, a fork branch) which scope the edge
    opens is unknown, so ``loop.*``, ``item.*`` and responder reads behind it
    are not also out of context (LP3202, LP3403)."""
    text = path.read_text()
    for m in re.finditer(r"from: \{node: (\w+), port: (\w+)\}", text):
        for wrong in (m.group(2) + m.group(2)[-1], m.group(2)[:-1]):
            bad = text[: m.start(2)] + wrong + text[m.end(2) :]
            assert _codes(bad) == ["LP4003"], (m.group(1), wrong, _diags(bad))


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_a_loop_exit_routed_to_a_succeeded_end_is_one_diagnostic(path: pathlib.Path) -> None:
    """A loop body's way back to ``continue`` routed to a succeeded End
    instead is one LP4008 at that edge (no LP4101 for the End inside the
    body), and its fix gives back a plan that checks clean."""
    text = path.read_text()
    hits = list(re.finditer(r"to: \{node: (\w+), port: continue\}", text))
    if not hits:
        pytest.skip("no loop")
    ends = re.findall(r"^  - id: (\w+)\n    type: end\n(?:    .*\n)*?    end: \{status: succeeded", text, re.M)
    assert ends
    for m in hits:
        for end in ends:
            bad = text[: m.start()] + f"to: {{node: {end}}}" + text[m.end() :]
            got = loopc.check_source(bad).diagnostics
            assert [d.code for d in got] == ["LP4008"], (end, _diags(bad))
            (e,) = got[0].fix.edits
            assert _codes(bad[: e.span.start] + e.new_text + bad[e.span.end :]) == []


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_a_legacy_header_is_one_diagnostic_whose_fix_rewrites_both_lines(path: pathlib.Path) -> None:
    """``apiVersion: loop.workflow/v1`` with ``kind: Workflow``: one LP2003
    (no LP2005), the kind related; its fix gives back the plan."""
    text = path.read_text()
    bad = text.replace("apiVersion: loop.plan/v1", "apiVersion: loop.workflow/v1", 1).replace(
        "kind: PlanVersion", "kind: Workflow", 1)
    (d,) = loopc.check_source(bad).diagnostics
    assert d.code == "LP2003" and len(d.related) == 1 and d.related[0].span is not None
    assert d.related[0].span.line == 2 and d.fix is not None
    fixed = bad
    for e in sorted(d.fix.edits, key=lambda e: e.span.start, reverse=True):
        fixed = fixed[: e.span.start] + e.new_text + fixed[e.span.end :]
    assert fixed == text
