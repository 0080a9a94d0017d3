"""LP1001 points at the cause of a YAML syntax error and says what was
written there (compiler/yamlerrors.py ``_report_parse_error``): the bracket or
quote that is never closed, the key indented to no open block's column, the
invisible character in indentation — with where the parser gave up as the
related location."""

from __future__ import annotations

import pathlib
import random
import re

import pytest

import loopc

H = "apiVersion: loop.plan/v1\nkind: PlanVersion\n"
BODY = ("input: {}\noutput: {}\nentry: done\nnodes:\n  - id: done\n    type: end\n"
        "    end: {status: succeeded}\nedges: []\n")


def _one(src: str):
    ds = loopc.check_source(src).diagnostics
    assert [d.code for d in ds] == ["LP1001"], [(d.code, d.message) for d in ds]
    return ds[0]


def _at(x) -> tuple[int, int]:
    return (x.span.line, x.span.column)


@pytest.mark.parametrize("ch,name", [
    ("\u00a0", "a no-break space (U+00A0)"),
    ("\u2002", "an en space (U+2002)"),
    ("\u2003", "an em space (U+2003)"),
    ("\u202f", "a narrow no-break space (U+202F)"),
    ("\u3000", "an ideographic space (U+3000)"),
    ("\u200b", "a zero width space (U+200B)"),
    ("\u2060", "a word joiner (U+2060)"),
    ("\ufeff", "a zero width no-break space (U+FEFF)"),
    ("\t", "a tab"),
])
@pytest.mark.parametrize("where", ["start", "middle", "top-level key"])
def test_invisible_indentation_is_named_at_the_character(ch: str, name: str, where: str) -> None:
    # a zero-width character takes no column: the author sees the spaces alone
    pad = "" if ch in "\u200b\u2060\ufeff" else " "
    if where == "start":
        src, pos = H + BODY.replace("    type: end", ch + "   " + ("" if pad else " ") + "type: end"), (8, 1)
    elif where == "middle":
        src, pos = H + BODY.replace("    type: end", "  " + ch + " " + ("" if pad else " ") + "type: end"), (8, 3)
    else:
        src, pos = H + BODY.replace("entry: done", ch + "entry: done"), (5, 1)
    d = _one(src)
    assert _at(d) == pos and f"line {pos[0]} is indented with {name}" in d.message, d.message
    if ch == "\t":
        assert d.fix is None  # a tab's width is the editor's
        return
    assert d.fix is not None and len(d.fix.edits) == 1
    if where == "top-level key" and pad:
        return  # a visible-width character before a top-level key: a space is no better
    # the fix keeps what the author sees, and the plan is well-formed
    edit = d.fix.edits[0]
    lines = src.split("\n")
    line = lines[pos[0] - 1]
    lines[pos[0] - 1] = line[: edit.span.column - 1] + edit.new_text + line[edit.span.end_column - 1:]
    fixed = "\n".join(lines)
    assert not [x for x in loopc.check_source(fixed).diagnostics if x.code == "LP1001"]


def test_invisible_characters_inside_text_are_content() -> None:
    block = H + BODY.replace("input: {}", "input:\n  topic:\n    type: string\n    default: |\n      \u00a0a\n      \u2002b")
    assert [d.code for d in loopc.check_source(block).diagnostics] == []


@pytest.mark.parametrize("opener,closer,kind", [("{", "}", "mapping"), ("[", "]", "sequence")])
@pytest.mark.parametrize("lines", [1, 2, 4])
def test_unclosed_flow_collection_is_reported_at_its_opener(opener: str, closer: str, kind: str, lines: int) -> None:
    first = "input: {a: {type: string}," if opener == "{" else "input: {a: {type: enum, values: [x,"
    rest = "".join(f"\n  {'b' + str(i) + ': {type: string}' if opener == '{' else 'y' + str(i)}"
                   f"{',' if i < lines - 1 else ''}" for i in range(lines))
    tail = "" if opener == "{" else "}}"
    src = H + first + rest + tail + "\n" + BODY.split("\n", 1)[1]
    d = _one(src)
    col = first.index(opener) + 1 if opener == "{" else first.rindex(opener) + 1
    if opener == "[":
        # the `}` closes before the `]`: the `[` is named with the wrong closer
        assert _at(d) == (3, col) and "this `[` is never closed: the `}`" in d.message
        return
    assert _at(d) == (3, col), d.message
    assert f"this `{opener}` is never closed" in d.message and f"close it with `{closer}`" in d.message
    assert d.related[0].message == "the parser gave up here" and d.related[0].span.line == 3 + lines + 1


def test_unclosed_at_end_of_file_and_mismatched_closer() -> None:
    d = _one(H + "input: {a: [1,\n  2\n")
    assert _at(d) == (3, 12) and "this `[` is never closed: the file ends before its `]`" in d.message
    d = _one(H + "input: {a: [1, 2}\n" + BODY.split("\n", 1)[1])
    assert _at(d) == (3, 12) and "the `}` at line 3, column 17 comes before its `]`" in d.message
    assert _at(d.related[0]) == (3, 17)


def test_missing_comma_is_reported_where_it_is_missing() -> None:
    d = _one(H + BODY.replace("input: {}", "input: {a: {type: string} b: {type: string}}"))
    assert _at(d) == (3, 27) and "a `,` or `}` is expected here" in d.message
    assert _at(d.related[0]) == (3, 8)


def test_unclosed_quote_is_reported_at_the_quote() -> None:
    d = _one(H + BODY.replace("entry: done", "entry: 'done"))
    assert _at(d) == (5, 8) and "this `'` is never closed" in d.message


@pytest.mark.parametrize("indent", [1, 3])
def test_misindented_key_names_only_the_columns_that_parse(indent: int) -> None:
    # column 3 (the list's `-`) and column 1 (`nodes`) line up with open
    # blocks too, but `type` there does not parse: only column 5 is named
    src = H + BODY.replace("    type: end", " " * indent + "type: end")
    d = _one(src)
    assert _at(d) == (8, indent + 1)
    assert d.message == (f"`type` on line 8 is indented to column {indent + 1}, which lines up with no open "
                         f"block: indent it to column 5 (like `id` on line 7)")
    assert [(r.message, _at(r)) for r in d.related] == [("`id` is at column 5", (7, 5))]
    assert d.fix is not None and d.fix.is_safe  # the one re-indentation that parses
    assert loopc.check_source(_apply(src, d.fix)).diagnostics == ()


def test_key_at_the_column_of_list_items() -> None:
    d = _one(H + BODY.replace("    type: end", "  type: end"))
    assert _at(d) == (8, 3)
    assert ("`type` on line 8 is at column 3, where the list's `- ` items start: indent it to column 5 "
            "(like `id` on line 7) to continue the item above, or start a new item with `- `") in d.message


def test_key_indented_under_a_scalar_value() -> None:
    d = _one(H + BODY.replace("entry: done", "entry: done\n  extra: x"))
    assert _at(d) == (6, 3) and "`extra` on line 6 is indented deeper than `entry`" in d.message


def test_second_colon_and_missing_colon() -> None:
    assert "a second `: ` on line 5" in _one(H + BODY.replace("entry: done", "entry: done: x")).message
    d = _one(H + BODY.replace("entry: done", "entry: done\nstray"))
    assert _at(d) == (6, 1) and "`stray` on line 6 is not followed by `:`" in d.message


def test_other_errors_keep_the_parser_words_with_the_construct_start() -> None:
    d = _one(H + BODY.replace("entry: done", "entry: *"))
    assert d.message.startswith("YAML syntax error: ") and d.related
    assert _at(d.related[0]) == (5, 8)


def test_second_document_is_the_only_diagnostic() -> None:
    # a stray `---` before `edges:` cuts the plan in two: the first half alone
    # would report every edge it lacks; the `---` is the one defect
    src = H + BODY.replace("edges: []", "---\nedges: []")
    ds = loopc.check_source(src).diagnostics
    assert [(d.code, d.span.line, d.span.column) for d in ds] == [("LP1004", 10, 1)]
    # near miss: `---` only at the top (a document start marker) is one document
    assert [d.code for d in loopc.check_source("---\n" + H + BODY).diagnostics] in ([], ["LP1009"])
    # the recheck once the stray `---` is removed
    assert loopc.check_source(src.replace("---\n", "")).diagnostics == ()


def _apply(src: str, fix) -> str:
    """``src`` with the fix's edits applied (1-based, code-point columns)."""
    lines = src.split("\n")
    for e in sorted(fix.edits, key=lambda e: (e.span.line, e.span.column), reverse=True):
        assert e.span.line == e.span.end_line
        line = lines[e.span.line - 1]
        lines[e.span.line - 1] = line[: e.span.column - 1] + e.new_text + line[e.span.end_column - 1:]
    return "\n".join(lines)


QUOTED = H + ("input:\n  a: {type: string, default: Q1}\n  b: {type: string, default: Q2}\n"
              "output: {}\nentry: done\nnodes:\n  - id: done\n    type: end\n    end: {status: succeeded}\n"
              "edges: []\n")


@pytest.mark.parametrize("q", ['"', "'"])
@pytest.mark.parametrize("flow", [False, True])
def test_quote_left_open_on_its_line_is_reported_at_the_quote(q: str, flow: bool) -> None:
    # the string runs on to the next quote, lines later, where the parser gives up
    if flow:
        src = QUOTED.replace("Q1", f"{q}x: y").replace("Q2", f"{q}z{q}")
        col = QUOTED.split("\n")[3].index("Q1") + 1
    else:
        src = (QUOTED.replace("  a: {type: string, default: Q1}", f"  a:\n    type: string\n    default: {q}x: y")
               .replace("Q2", f"{q}z{q}"))
        col = 14
    d = _one(src)
    assert _at(d) == (4 if flow else 6, col), d.message
    assert d.message.startswith(f"this `{q}` is never closed on line {4 if flow else 6}: "), d.message
    assert [r.message for r in d.related] == [f"the next `{q}` is here", "the parser gave up here"]
    assert d.related[1].span.line == (5 if flow else 7)
    # the fix closes it on its own line (before the flow `}`), and the plan checks clean
    fixed = _apply(src, d.fix)
    assert f"default: {q}x: y{q}" in fixed
    assert loopc.check_source(fixed).diagnostics == ()


def test_strings_spanning_lines_are_not_blamed() -> None:
    # near miss: a quoted string that really spans lines is fine ...
    src = QUOTED.replace("Q1", '"x\n    y"').replace("Q2", "z")
    assert loopc.check_source(src).diagnostics == ()
    # ... and a later syntax error is not put on it
    d = _one(src.replace("entry: done", "entry: [done"))
    assert "`[` is never closed" in d.message and _at(d)[0] != 4


# -- indentation: the cause, told by re-parsing (compiler/yamlindent.py) -------

SWITCH = (H + "input:\n  severity: {type: string, required: true}\noutput: {}\nentry: route\nnodes:\n"
          "  - id: route\n    type: switch\n    input:\n      severity: {type: string, required: true}\n"
          "    switch:\n      mode: first_match\n      cases:\n"
          "        - {port: high, when: \"input.severity == 'high'\"}\n"
          "        - {port: low, when: \"input.severity == 'low'\"}\n"
          "      default: other\n"
          "  - id: paged\n    type: end\n    end: {status: succeeded}\n"
          "  - id: logged\n    type: end\n    end: {status: succeeded}\n"
          "edges:\n  - {id: e_high, from: {node: route, port: high}, to: {node: paged}}\n"
          "  - {id: e_low, from: {node: route, port: low}, to: {node: logged}}\n"
          "  - {id: e_other, from: {node: route, port: other}, to: {node: logged}}\n")


def _shift(src: str, line: int, delta: int) -> str:
    lines = src.split("\n")
    lines[line - 1] = " " * delta + lines[line - 1] if delta > 0 else lines[line - 1][-delta:]
    return "\n".join(lines)


def test_switch_near_miss_is_clean() -> None:
    assert loopc.check_source(SWITCH).diagnostics == ()


@pytest.mark.parametrize("delta", [-2, -1, 1, 2])
def test_misindented_key_is_blamed_not_the_sibling_after_it(delta: int) -> None:
    # libyaml gives up at `cases` (line 14); the cause is `mode` (line 13)
    src = _shift(SWITCH, 13, delta)
    d = _one(src)
    assert _at(d) == (13, 7 + delta), d.message
    assert d.message == (f"`mode` on line 13 is indented to column {7 + delta}, out of line with the block it "
                         f"belongs to, so the parser gives up on line 14: indent it to column 7 (like `cases` "
                         f"on line 14)")
    assert d.related[0].message == "the parser gave up here" and d.related[0].span.line == 14
    assert (d.related[1].message, _at(d.related[1])) == ("`cases` is at column 7", (14, 7))
    assert d.fix is not None and d.fix.message == "indent `mode` to column 7"
    # deeper, `mode` also parses under `switch` moved into `input`, but that is
    # no plan (the switch's keys become input fields): column 7 is the one
    # re-indentation the whole check accepts, so the fix is safe either way
    assert d.fix.is_safe
    assert _apply(src, d.fix) == SWITCH


def test_key_dedented_away_from_its_block_is_blamed_lines_before_the_stop() -> None:
    # `cases` at `switch`'s column: its items still parse (under it), the
    # parser gives up three lines later at `default`
    src = _shift(SWITCH, 14, -2)
    d = _one(src)
    assert _at(d) == (14, 5) and "so the parser gives up on line 17: indent it to column 7 (like `mode` on line 13)" \
        in d.message, d.message
    assert loopc.check_source(_apply(src, d.fix)).diagnostics == ()


@pytest.mark.parametrize("line,delta,col", [
    (18, 1, 3),   # a node's `- ` one column deeper than its siblings
    (18, -1, 3),  # ... one column shallower
    (16, 1, 9),   # a switch case
    (26, -1, 3),  # an edge
])
def test_misaligned_list_item_names_the_list_column_only(line: int, delta: int, col: int) -> None:
    src = _shift(SWITCH, line, delta)
    d = _one(src)
    assert _at(d) == (line, col + delta), d.message
    assert d.message.startswith(f"the `- ` item on line {line} is "), d.message
    assert d.message.endswith(f": indent it to column {col} (like the `-` items on line {line - 1 if line != 18 else 8})")
    assert d.fix is not None and d.fix.message == f"indent the `- ` item to column {col}"
    assert loopc.check_source(_apply(src, d.fix)).diagnostics == ()


def test_misaligned_list_item_with_its_block_moves_the_block() -> None:
    # the whole item one column deeper: the `- ` goes back with the lines under it
    lines = SWITCH.split("\n")
    for i in range(17, 20):
        lines[i] = " " + lines[i]
    src = "\n".join(lines)
    d = _one(src)
    assert _at(d) == (18, 4) and d.fix is not None and d.fix.message == "indent the `- ` item to column 3 with its block"
    assert [e.span.line for e in d.fix.edits] == [18, 19, 20]
    assert loopc.check_source(_apply(src, d.fix)).diagnostics == ()


def test_dedented_continuation_is_told_to_continue_the_value() -> None:
    src = SWITCH.replace("    end: {status: succeeded}\n  - id: logged",
                         "    description: paged, and the incident is\n  handled elsewhere\n"
                         "    end: {status: succeeded}\n  - id: logged", 1)
    d = _one(src)
    assert _at(d) == (21, 3), d.message
    assert d.message.endswith(": indent it to column 7 (to continue the value of `description` on line 20)")
    assert loopc.check_source(_apply(src, d.fix)).diagnostics == ()


def test_two_columns_as_near_that_both_parse_are_told_apart_by_the_check() -> None:
    # `default` one column out, between `cases` (7) and `switch` (5): both
    # parse, but at column 5 `default` is a node key (LP2007): column 7 is the
    # one answer, named alone, and its fix is safe (issue 21 finding 12)
    src = _shift(SWITCH, 17, -1)
    d = _one(src)
    assert d.message.endswith("indent it to column 7 (like `cases` on line 14)"), d.message
    assert d.fix is not None and d.fix.is_safe and _apply(src, d.fix) == SWITCH


def test_two_columns_that_parse_without_the_judge_name_both_and_offer_no_fix() -> None:
    # the YAML pass alone (no judge: what a caller of yamlload.load gets) cannot
    # tell the two columns apart: both are named and no fix is offered
    from loopc.compiler import yamlload
    from loopc.compiler.report import Reporter

    r = Reporter()
    yamlload.load(_shift(SWITCH, 17, -1), r)  # the YAML pass alone: parsing cannot tell them apart
    (d,) = r.diagnostics
    assert "column 5 (like `switch` on line 12)" in d.message and "column 7 (like `cases` on line 14)" in d.message
    assert d.fix is None


# -- every example: one line re-indented --------------------------------------

EXAMPLES = sorted((pathlib.Path(__file__).resolve().parents[1] / "examples").glob("*.yaml"))
_KEY_OR_ITEM = re.compile(r"( *)(?:- +)?[A-Za-z_][\w.-]*:(?: |$)")


def _parses(src: str) -> bool:
    from loopc.compiler.yamlload import _reparse_stop

    return _reparse_stop(src) is None


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
@pytest.mark.slow
def test_one_line_re_indented_is_one_lp1001_at_that_line(path: pathlib.Path) -> None:
    """A key or `- ` item line of the example moved by ±1 or ±2 columns:
    where the result no longer parses, exactly one LP1001, at the moved line
    (rarely another: a key dedented out of its block, its child then two
    steps deeper, reads the same as that child indented too deep — only
    the meaning of the keys tells them apart); a fix makes the file parse
    again, and check clean when the example did (a safe fix in particular:
    the one re-indentation tried that parses)."""
    src = path.read_text(encoding="utf-8")
    clean = loopc.check_source(src).diagnostics == ()
    lines = src.split("\n")
    rng = random.Random(path.stem)
    picks = [i for i, ln in enumerate(lines) if i >= 2 and _KEY_OR_ITEM.match(ln)]
    failing = elsewhere = safe = 0
    for i in sorted(rng.sample(picks, min(8, len(picks)))):
        lead = len(lines[i]) - len(lines[i].lstrip(" "))
        for delta in (-2, -1, 1, 2):
            if lead + delta < 0:
                continue
            mutated = "\n".join(lines[:i] + [" " * (lead + delta) + lines[i][lead:]] + lines[i + 1:])
            if _parses(mutated):
                continue
            failing += 1
            ds = loopc.check_source(mutated).diagnostics
            assert [d.code for d in ds] == ["LP1001"], (i + 1, delta, [(d.code, d.message) for d in ds])
            d = ds[0]
            if d.span.line != i + 1:
                elsewhere += 1
                assert d.fix is None or _parses(_apply(mutated, d.fix)), (i + 1, delta, d.message)
                continue
            if d.fix is not None:
                safe += d.fix.is_safe
                fixed = _apply(mutated, d.fix)
                assert _parses(fixed), (i + 1, delta, d.message)
                if clean:
                    assert loopc.check_source(fixed).diagnostics == (), (i + 1, delta, d.message)
    assert failing and elsewhere <= failing // 20, (failing, elsewhere)
    assert safe or not clean  # the one re-indentation that parses is safe, and checks clean
