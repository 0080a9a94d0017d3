"""Messages that point at the real cause: enum typos get a did-you-mean
wherever an enum value is checked; LP3305 offers only a fix that can work;
related notes of state findings point at the read or write itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import loopc
from loopc.compiler.spelling import not_an_enum_value

FIXTURES = Path(__file__).parent / "fixtures"


def _diags(path: str, code: str):
    res = loopc.check_source((FIXTURES / path).read_text("utf-8"))
    return [d for d in res.diagnostics if d.code == code]


# --- did-you-mean ------------------------------------------------------------------

@pytest.mark.parametrize("word,choices,hint", [
    ("ot", ("id", "from", "to", "bind"), "to"),        # two letters swapped: difflib's ratio is 0.5
    ("tp", ("id", "from", "to", "bind"), "to"),        # one substituted in a two-letter key
    ("di", ("id", "type", "input"), "id"),
    ("io", ("id", "from", "to", "bind"), None),        # one edit from `id` and from `to`: no guess
    ("xy", ("id", "to"), None),
    ("tpye", ("id", "type"), "type"),                  # difflib already had these
    ("valeus", ("values", "items"), "values"),
])
def test_suggest_takes_the_only_choice_one_edit_away(word: str, choices: tuple[str, ...], hint: str | None) -> None:
    from loopc.compiler.spelling import suggest

    assert suggest(word, choices) == hint


@given(st.text(alphabet="abc", max_size=6), st.text(alphabet="abc", max_size=6))
def test_one_edit_is_an_optimal_string_alignment_distance_of_at_most_one(a: str, b: str) -> None:
    from loopc.compiler.spelling import _one_edit

    def osa(x: str, y: str) -> int:
        d = [[i + j if i * j == 0 else 0 for j in range(len(y) + 1)] for i in range(len(x) + 1)]
        for i in range(1, len(x) + 1):
            for j in range(1, len(y) + 1):
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (x[i - 1] != y[j - 1]))
                if i > 1 and j > 1 and x[i - 1] == y[j - 2] and x[i - 2] == y[j - 1]:
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
        return d[len(x)][len(y)]

    assert _one_edit(a, b) is (osa(a, b) <= 1)


# --- enum values -------------------------------------------------------------------

def test_enum_typos_suggest_the_declared_value_everywhere() -> None:
    res = loopc.check_source((FIXTURES / "types" / "enum_value_typo.yaml").read_text("utf-8"))
    got = {d.code: d.message for d in res.diagnostics}
    assert got["LP2024"].endswith("'drafted' is not one of the enum values (draft, approved, rejected); "
                                  "did you mean 'draft'?")
    assert got["LP3303"].endswith("did you mean 'approved'?")
    # the comparison names the values once, with the suggestion, no repeated type
    assert got["LP3025"] == ("'rejectd' is not one of the enum values (draft, approved, rejected); "
                             "did you mean 'rejected'?")


@pytest.mark.parametrize("value,values,hint", [
    ("HIGH", ("low", "high"), "high"),        # case
    ("in-progress", ("in_progress", "done"), "in_progress"),  # separator
    ("aproved", ("approved", "rejected"), "approved"),
    ("medium", ("low", "high"), None),         # nothing close: no guess
])
def test_enum_suggestion_rule(value: str, values: tuple[str, ...], hint: str | None) -> None:
    msg = not_an_enum_value(value, values)
    assert msg.startswith(f"'{value}' is not one of the enum values ({', '.join(values)})")
    assert (f"did you mean '{hint}'?" in msg) if hint else "did you mean" not in msg



_ENUM_PLAN = (Path(__file__).parent / "fixtures" / "types" / "enum_value_typo_ok.yaml").read_text("utf-8")


@pytest.mark.parametrize("when", [
    "\"run.state.status == 'rejectd'\"",   # double-quoted YAML, single-quoted literal
    "'run.state.status == \"rejectd\"'",   # single-quoted YAML, double-quoted literal
    "run.state.status == 'rejectd'",         # plain YAML
])
def test_enum_literal_typo_fix_checks_clean(when: str) -> None:
    """LP3025's did-you-mean carries its replacement as an (unsafe) edit of
    the literal's text, quotes kept, in every YAML scalar style; applying it
    leaves a plan that checks clean."""
    from loopc.diagnostics import Applicability
    from loopc.lint.fixes import apply_fixes

    good = "\"run.state.status == 'rejected'\""
    assert good in _ENUM_PLAN
    src = _ENUM_PLAN.replace(good, when)
    res = loopc.check_source(src)
    (d,) = [d for d in res.diagnostics if d.code == "LP3025"]
    assert d.fix is not None and d.fix.applicability is Applicability.UNSAFE
    assert [e.new_text for e in d.fix.edits] == ["rejected"]
    fixed, n = apply_fixes(src, [d], unsafe=True)
    assert n == 1 and loopc.check_source(fixed).ok, fixed


def test_every_enum_typo_fix_applies_and_checks_clean() -> None:
    """The default (LP2024), the assignment (LP3303) and the comparison
    (LP3025) of enum_value_typo.yaml each carry their did-you-mean as an
    unsafe edit; applying them all leaves a plan that checks clean."""
    from loopc.diagnostics import Applicability
    from loopc.lint.fixes import apply_fixes

    src = (FIXTURES / "types" / "enum_value_typo.yaml").read_text("utf-8")
    ds = loopc.check_source(src).diagnostics
    assert {d.code for d in ds} == {"LP2024", "LP3303", "LP3025"}
    assert all(d.fix is not None and d.fix.applicability is Applicability.UNSAFE for d in ds)
    fixed, n = apply_fixes(src, ds, unsafe=True)
    assert n == 3 and loopc.check_source(fixed).ok, fixed


@pytest.mark.parametrize("value,style,ok", [
    ("approved", "", True), ("approved", '"', True),
    ("yes", "", False), ("yes", "'", True),          # a plain `yes` is a boolean in YAML 1.1
    ("1.5", "", False), ("in progress", "", False), ("in progress", '"', True),
    ("it's", "'", False), ('say "hi"', '"', False), ("a: b", "", False), ("a#b", '"', False),
])
def test_a_suggestion_is_written_only_where_it_reads_as_itself(value: str, style: str, ok: bool) -> None:
    from loopc.compiler.spelling import writable_in_scalar

    assert writable_in_scalar(value, style) is ok


_ENUM_OK = (FIXTURES / "types" / "enum_value_typo_ok.yaml").read_text("utf-8")


@pytest.mark.parametrize("q", ["", "'", '"'])
@pytest.mark.parametrize("before,good,bad,after", [
    ("default: ", "draft", "drafted", "}"),          # LP2024
    ("{status: ", "approved", "aproved", "}"),       # LP3303
])
def test_an_enum_value_fix_keeps_the_scalar_style(before: str, good: str, bad: str, after: str, q: str) -> None:
    """The LP2024/LP3303 did-you-mean edits the value's characters only:
    a quoted value stays quoted, and the fixed plan checks clean."""
    from loopc.lint.fixes import apply_fixes

    plain = before + good + after
    assert plain in _ENUM_OK
    src = _ENUM_OK.replace(plain, f"{before}{q}{bad}{q}{after}")
    (d,) = loopc.check_source(src).diagnostics
    fixed, n = apply_fixes(src, [d], unsafe=True)
    assert n == 1 and fixed == _ENUM_OK.replace(plain, f"{before}{q}{good}{q}{after}")
    assert loopc.check_source(fixed).ok, fixed


@pytest.mark.parametrize("bad,fix", [
    ("{answer: yess}", None),          # a plain `yes` is a boolean to a YAML 1.1 reader: no edit
    ("{answer: 'yess'}", "yes"),       # quoted, it is the string
    ('{answer: "noo"}', "no"),
])
def test_an_enum_suggestion_yaml_would_misread_is_not_written_plain(bad: str, fix: str | None) -> None:
    src = (_ENUM_OK.replace("  status: {type: enum, values: [draft, approved, rejected], default: draft}",
                            "  status: {type: enum, values: [draft, approved, rejected], default: draft}\n"
                            "  answer: {type: enum, values: ['yes', 'no'], default: 'no'}")
           .replace("{status: approved}", bad))
    (d,) = loopc.check_source(src).diagnostics
    assert d.code == "LP3303" and f"did you mean '{fix or 'yes'}'" in d.message
    assert (d.fix is None) if fix is None else [e.new_text for e in d.fix.edits] == [fix]


def _read_back(text: str, style: str) -> list[object]:
    """How loopc (YAML 1.2 core) and a YAML 1.1 reader read ``text`` as the
    value of a block and a flow mapping, written in ``style``."""
    from ruamel.yaml import YAML

    from loopc.compiler.report import Reporter
    from loopc.compiler.yamlload import load

    scalar = f"{style}{text}{style}"
    got: list[object] = []
    for src in (f"k: {scalar}\n", f"m: {{k: {scalar}}}\n"):
        r = Reporter()
        doc = load(src, r)
        root = doc.root if doc is not None and not [d for d in r.diagnostics if d.code.startswith("LP10")] else None
        data = root.to_data() if root is not None else None
        got.append(data.get("k", data.get("m", {}).get("k") if isinstance(data.get("m"), dict) else None)
                   if isinstance(data, dict) else None)
        y11 = YAML(typ="safe", pure=True)
        y11.version = (1, 1)
        try:
            data = y11.load(src)
        except Exception:  # noqa: BLE001 - unreadable counts as misread
            data = None
        got.append(data.get("k", data.get("m", {}).get("k") if isinstance(data.get("m"), dict) else None)
                   if isinstance(data, dict) else None)
    return got


@given(text=st.text(alphabet="aeynoftrul_-.: #'\"\\1é", min_size=1, max_size=8),
       style=st.sampled_from(["", "'", '"']))
@settings(max_examples=300, deadline=None)
def test_a_writable_suggestion_reads_back_as_itself(text: str, style: str) -> None:
    """Whatever :func:`writable_in_scalar` allows in a scalar of ``style``
    is read back as that very string, by loopc and by a YAML 1.1 reader,
    in block and flow context."""
    from loopc.compiler.spelling import writable_in_scalar

    if writable_in_scalar(text, style):
        assert _read_back(text, style) == [text] * 4


@pytest.mark.parametrize("text", ["yes", "No", "on", "OFF", "y", "null", "1", "1.5", "0x1f", ".inf", "~", "true"])
def test_a_plain_suggestion_yaml_resolves_otherwise_is_refused(text: str) -> None:
    from loopc.compiler.spelling import writable_in_scalar

    assert not writable_in_scalar(text, "")
    assert writable_in_scalar(text, "'") is (text[0].isalnum())


def test_enum_literal_without_a_close_value_has_no_fix() -> None:
    (d,) = _diags("types/expr_literal_mismatch.yaml", "LP3025")[1:]
    assert "'medium'" in d.message and d.fix is None

# --- LP3305: only fixes that can work ------------------------------------------------

def test_pass_through_at_the_entry_offers_no_bind() -> None:
    (d,) = _diags("bindings/bind_entry_passthrough.yaml", "LP3305")
    # the entry takes the Plan input by name: there is no edge to bind on
    assert "bind" not in d.message
    assert "change the Plan input field `room` to scope, or entry node 'ask_review' input field `room` to channel" \
        in d.message


def test_pass_through_names_a_value_that_can_be_bound() -> None:
    (d,) = _diags("bindings/bind_passthrough_not_assignable.yaml", "LP3305")
    assert "write an explicit `bind` from a value of type string (such as `notes: {ref: input.title}`)" in d.message


def test_pass_through_offers_no_bind_when_nothing_can_be_bound() -> None:
    (d,) = _diags("bindings/bind_passthrough_unbindable.yaml", "LP3305")
    assert "no value of type work_items can be bound here" in d.message and "write an explicit" not in d.message
    # the source is the failed port's fixed output: only the destination can change
    assert "change the input of 'report' field `detail` to string" in d.message
    assert "fixed by its node kind" in d.message and "change the output" not in d.message


def test_suggested_bind_checks_clean() -> None:
    """The bind LP3305 suggests, written into the plan, removes the error."""
    import re

    path = FIXTURES / "bindings" / "bind_passthrough_not_assignable.yaml"
    src = path.read_text("utf-8")
    (d,) = [x for x in loopc.check_source(src).diagnostics if x.code == "LP3305"]
    bind = re.search(r"`(notes: \{ref: [a-z_.]+\})`", d.message).group(1)
    line = src.splitlines()[d.span.line - 1]
    assert line == "    to: {node: reviews}", line
    fixed = src.replace(line + "\n", line + "\n    bind: {" + _all_fields(src, bind) + "}\n", 1)
    assert fixed != src
    assert [x.code for x in loopc.check_source(fixed).diagnostics if x.edge == d.edge] == []


def _all_fields(src: str, bind: str) -> str:
    """The suggested binding plus the same-name ones an explicit bind must
    now spell out (an explicit bind replaces the pass-through)."""
    res = loopc.check_source(src)
    plan = res.plan
    dst = plan.nodes["reviews"]
    names = [n for n in dst.input_contract if n != "notes"]
    return ", ".join([bind] + [f"{n}: {{ref: output.{n}}}" for n in names])


# --- related notes point at the read itself ------------------------------------------

_RACE = (FIXTURES / "analysis" / "state_race_bind.yaml").read_text("utf-8")


def _race_note(src: str) -> tuple[str, str]:
    """(the related note's message, the source text it underlines)."""
    (d,) = [x for x in loopc.check_source(src).diagnostics if x.code == "LP4601"]
    (r,) = d.related
    line = src.splitlines()[r.span.line - 1]
    assert r.span.end_line == r.span.line
    return r.message, line[r.span.column - 1:r.span.end_column - 1]


def test_race_note_points_at_the_template_path() -> None:
    msg, under = _race_note(_RACE)
    assert msg == "send_message `announce` reads `run.state.status` here" and under == "run.state.status"


def test_race_note_points_at_the_bind_reference() -> None:
    src = _RACE.replace(
        '    sendMessage: {target: "#release", text: "Status: {{ run.state.status }}", completion: sent}',
        '    input:\n      status: {type: string, required: true}\n'
        '    sendMessage: {target: "#release", text: "Status: {{ input.status }}", completion: sent}',
    ).replace("to: {node: announce}}", "to: {node: announce}, bind: {status: {ref: run.state.status}}}")
    msg, under = _race_note(src)
    assert msg == "edge `e_announce` reads `run.state.status` here" and under == "run.state.status"


def test_race_note_points_at_the_path_inside_an_expression() -> None:
    src = _RACE.replace('  status: {type: string, default: "new"}',
                        '  status: {type: string, default: "new"}\n  seen: {type: boolean, default: false}').replace(
        '    type: send_message\n    sendMessage: {target: "#release", text: "Status: {{ run.state.status }}", '
        'completion: sent}',
        "    type: set_variable\n    setVariable:\n"
        "      assign: {seen: {expr: \"run.state.seen || run.state.status == 'released'\"}}")
    msg, under = _race_note(src)
    # the other path of the same expression is not the one underlined
    assert msg == "set_variable `announce` reads `run.state.status` here" and under == "run.state.status"


# --- LP4202: the explanation states what the prover can and cannot prove ------------

@pytest.mark.parametrize("high,low,severity,proved", [
    ("input.severity == 'high'", "input.severity != 'high'", "string", True),  # every value, null included
    ("input.severity == 'high' || true", "input.severity == 'low'", "string", True),
    ("input.severity < 'm'", "input.severity >= 'm'", "string", False),  # string orderings are unknowns
    ("input.severity == 'high'", "input.severity == 'low'", "enum, values: [high, low]", True),  # every member
    ("input.severity == 'high'", "input.severity == 'low'", "enum, values: [high, low, none]", False),
])
def test_lp4202_explanation_matches_the_prover(high: str, low: str, severity: str, proved: bool) -> None:
    """Each limit `loopc explain LP4202` states is what the prover does
    (update both together when the prover learns more)."""
    from loopc import codes
    from loopc.codes import analysis as ex

    text = codes.get("LP4202").explanation
    assert "cases naming every member are exhaustive" in text
    assert "orderings of strings" in text and "4,096" in text
    src = ex._switch_plan(ex._cases(high, low)).replace(
        "severity: {type: string, required: true}", f"severity: {{type: {severity}, required: true}}")
    got = [d.code for d in loopc.check_source(src).diagnostics]
    assert ("LP4202" in got) is proved, got


# --- the whole corpus ----------------------------------------------------------------

_CORPUS: list = []


def _corpus() -> list:
    """``(input, diagnostic)`` for every check and compile diagnostic of every
    fixture and example (computed once)."""
    if not _CORPUS:
        root = Path(__file__).parent.parent
        for p in sorted(FIXTURES.rglob("*.yaml")) + sorted((root / "examples").glob("*.yaml")):
            src = p.read_bytes()
            name = str(p.relative_to(root))
            for d in loopc.check_source(src, path=name).diagnostics:
                _CORPUS.append((name, d))
            for d in loopc.compile_source(src, path=name).diagnostics:
                _CORPUS.append((name, d))
    return _CORPUS


@pytest.mark.slow
def test_no_related_note_has_an_empty_message() -> None:
    """Every related location says what it is (a note with no text is shown
    as a bare position by every format)."""
    bad = [(name, d.code, r) for name, d in _corpus() for r in d.related if not r.message.strip()]
    assert bad == []


@pytest.mark.slow
def test_a_slot_is_named_once_before_expects() -> None:
    """``<slot> expects <type>``: the slot is named without a description of
    what it takes, so the type is said once (not "`assignee` (a member)
    expects member")."""
    bad = sorted({(name, d.code, d.message) for name, d in _corpus() if ") expects " in d.message})
    assert bad == []


# --- LP3204: where the missing field would be declared ---------------------------------

_REF_PLAN = """apiVersion: loop.plan/v1
kind: PlanVersion
input:
  room: {type: scope, required: true}
output: {}
state:
  phase: {type: string, default: new}
entry: tell
nodes:
  - id: tell
    type: send_message
    input:
      topic: {type: string, required: true}
    sendMessage: {scope: {ref: run.input.room}, text: "TEXT", completion: sent}
  - id: done
    type: end
    end: {status: succeeded}
edges:
  - {id: e_done, from: {node: tell, port: completed}, to: {node: done}}
"""


@pytest.mark.parametrize("text,hint", [
    ("{{ run.state.owner }}", "declare `owner` under the top-level `state`, with its type and default"),
    ("{{ run.input.release }}", "declare `release` under the top-level `input`, with its type"),
    ("{{ input.title }}", "declare `title` in the `input` of node `tell`, with its type"),
])
def test_unknown_field_says_where_to_declare_it(text: str, hint: str) -> None:
    res = loopc.check_source(_REF_PLAN.replace("TEXT", text))
    (d,) = [d for d in res.diagnostics if d.code == "LP3204"]
    assert d.message.endswith("; to add it, " + hint), d.message
    assert d.fix is None  # the field's type is the author's to choose


def test_unknown_field_close_to_a_declared_one_suggests_it_instead() -> None:
    res = loopc.check_source(_REF_PLAN.replace("TEXT", "{{ run.state.phse }}"))
    (d,) = [d for d in res.diagnostics if d.code == "LP3204"]
    assert d.message.endswith("did you mean `phase`?") and "to add it" not in d.message
    assert d.fix is not None
