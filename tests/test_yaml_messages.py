"""LP1001 points at the cause of a YAML syntax error and says what was
written there (compiler/yamlload.py ``_report_parse_error``): the bracket or
quote that is never closed, the key indented to no open block's column, the
invisible character in indentation — with where the parser gave up as the
related location."""

from __future__ import annotations

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


@pytest.mark.parametrize("indent,options", [
    (3, "column 5 (like `id` on line 7) or column 3 (like the `-` items on line 7)"),
    (1, "column 3 (like the `-` items on line 7) or column 1 (like `nodes` on line 6)"),
])
def test_misindented_key_names_the_columns_that_would_work(indent: int, options: str) -> None:
    d = _one(H + BODY.replace("    type: end", " " * indent + "type: end"))
    assert _at(d) == (8, indent + 1)
    assert f"`type` on line 8 is indented to column {indent + 1}" in d.message and options in d.message
    assert d.related and all("at column" in r.message for r in d.related)


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
