"""loopc.lineindex.LineIndex: code-point offsets ↔ (line, column) in code
points, UTF-16 units and UTF-8 bytes, and whole-text UTF-8/UTF-16 offsets;
lines break exactly where loopc's positions do (LF, CRLF, CR — not NEL,
U+2028, U+2029)."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import loopc
from loopc.lineindex import ENCODINGS, LineIndex

# CJK, emoji (astral, with ZWJ and a variation selector), combining marks,
# and every line-break flavour including the YAML-only ones
SAMPLES = [
    "",
    "abc",
    "日本語\n中文\r\n한국어",
    "😀👩‍💻\n🇫🇷 x",
    "e\u0301 a\u0308\u0323\n\u0915\u094d\u0937",
    "a\r\nb\r\n\r\nc\r\n",
    "a\rb\r\rc",
    "a\x85b\u2028c\u2029d\ne",
    "\n\n\n",
    "mixed\n日本\r😀\r\nx\u2028y",
]


def _reference_lines(text: str) -> list[str]:
    out, cur, i = [], [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\r" and text[i + 1 : i + 2] == "\n":
            out.append("".join(cur))
            cur = []
            i += 2
            continue
        if ch in "\r\n":
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    out.append("".join(cur))
    return out


def _offsets(text: str) -> list[int]:
    """Every offset that is a position (not between CR and LF)."""
    return [i for i in range(len(text) + 1) if not (0 < i < len(text) and text[i - 1 : i + 1] == "\r\n")]


def _check_roundtrips(text: str) -> None:
    idx = LineIndex(text)
    assert idx.lines() == _reference_lines(text)
    for o in _offsets(text):
        line, col = idx.position(o)
        assert text[idx.line_start(line) : o] == idx.line_text(line)[:col]
        prefix = text[idx.line_start(line) : o]
        for enc in ENCODINGS:
            l2, c = idx.position(o, enc)
            assert l2 == line
            want = {"utf-32": len(prefix), "utf-16": len(prefix.encode("utf-16-le")) // 2,
                    "utf-8": len(prefix.encode("utf-8"))}[enc]
            assert c == want, (text, o, enc)
            assert idx.offset(line, c, enc) == o
            u = idx.unit_offset(o, enc)
            whole = {"utf-32": o, "utf-16": len(text[:o].encode("utf-16-le")) // 2,
                     "utf-8": len(text[:o].encode("utf-8"))}[enc]
            assert u == whole
            assert idx.from_unit_offset(u, enc) == o
        assert idx.convert(line, col, "utf-32", "utf-16") == idx.position(o, "utf-16")
        assert idx.utf8_offset(o) == len(text[:o].encode("utf-8"))
        assert idx.from_utf16_offset(idx.utf16_offset(o)) == o


def test_samples_round_trip() -> None:
    for text in SAMPLES:
        _check_roundtrips(text)


def test_yaml_only_breaks_are_column_characters() -> None:
    idx = LineIndex("a\x85b\u2028c\u2029d\ne")
    assert idx.line_count == 2 and idx.line_text(0) == "a\x85b\u2028c\u2029d"
    assert idx.position(6) == (0, 6) and idx.position(8) == (1, 0)


def test_astral_character_widths() -> None:
    idx = LineIndex("x😀y")
    assert idx.position(2, "utf-16") == (0, 3) and idx.position(2, "utf-8") == (0, 5)
    # a column inside a character is that character's start
    assert idx.offset(0, 2, "utf-16") == 1
    assert idx.offset(0, 3, "utf-8") == 1
    assert idx.from_unit_offset(2, "utf-16") == 1


def test_out_of_range_clamps() -> None:
    idx = LineIndex("ab\ncd")
    assert idx.position(-5) == (0, 0) and idx.position(99) == (1, 2)
    assert idx.offset(0, 99) == 2  # end of the line, before its break
    assert idx.offset(7, 0) == 5 and idx.offset(-1, 3) == 0
    assert idx.offset(0, 99, "utf-16") == 2
    assert idx.from_unit_offset(99, "utf-8") == 5 and idx.from_unit_offset(-1, "utf-16") == 0
    assert idx.line_text(9) == ""


def test_unit_offset_on_a_line_break() -> None:
    idx = LineIndex("日\r\nb")
    # byte 3 is the CR, byte 4 the LF
    assert idx.from_unit_offset(3, "utf-8") == 1 and idx.from_unit_offset(5, "utf-8") == 3


def test_check_result_exposes_the_documents_index() -> None:
    src = "apiVersion: loop.plan/v1\r\nkind: PlanVersion\r\n# 😀\r\n"
    res = loopc.check_source(src)
    assert res.line_index is res.document.index
    assert res.line_index.position(len(src), "utf-16") == (3, 0)
    assert loopc.check_source(b"\xff").line_index is None


_ALPHABET = st.sampled_from(list("ab \t:") + ["\r", "\n", "\r\n", "\x85", "\u2028", "\u2029",
                                              "日", "😀", "e\u0301", "\ud7ff", "\ue000"])


@settings(max_examples=150, derandomize=True, deadline=None)
@given(st.lists(_ALPHABET, max_size=24).map("".join))
def test_round_trips_property(text: str) -> None:
    _check_roundtrips(text)


def _plan_with(text_value: str, brk: str) -> str:
    lines = [
        "apiVersion: loop.plan/v1", "kind: PlanVersion",
        "input:", "  topic: {type: string, required: true}", "output: {}", "entry: say", "nodes:",
        "  - id: say", "    type: send_message", "    name: 日本語 😀 e\u0301",
        f"    send_message: {{channel: general, text: \"{text_value}\"}}",
        "    tpye: x",
        "  - {id: done, type: end, end: {status: succeeded}}",
        "edges:", "  - {id: e1, from: {node: say, port: sent}, to: {node: done}}", "",
    ]
    return brk.join(lines)


def _walk(node: object):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        for item in getattr(n, "items", ()):
            stack.extend(item if isinstance(item, tuple) else (item,))


# every YAML node and diagnostic of a real check: its span's line/column and
# offsets agree through the one index, in code points, UTF-16 and UTF-8
_VALUES = ["日本語 {{ input.topic }}", "😀👩‍💻 🇫🇷", "e\u0301 a\u0308\u0323", "a\x85b", "a\u2028b\u2029c",
           "mixed 中文 😀 e\u0301\x85\u2028 {{ input.topic }}"]


@settings(max_examples=len(_VALUES) * 3, derandomize=True, deadline=None)
@given(st.sampled_from(_VALUES), st.sampled_from(["\n", "\r\n", "\r"]))
def test_check_positions_round_trip_through_the_index(value: str, brk: str) -> None:
    src = _plan_with(value, brk)
    res = loopc.check_source(src)
    idx, text = res.line_index, res.document.text
    assert idx is not None and not any(d.code.startswith("LP10") for d in res.diagnostics)
    spans = [n.span for n in _walk(res.document.root)] + [d.span for d in res.diagnostics if d.span]
    assert any(d.code == "LP2007" for d in res.diagnostics)  # 'tpye', after every exotic line
    for sp in spans:
        for off, line, col in ((sp.start, sp.line, sp.column), (sp.end, sp.end_line, sp.end_column)):
            assert off is not None and 0 <= off <= len(text)
            assert idx.position(off) == (line - 1, col - 1), (sp, value, brk)
            assert idx.offset(line - 1, col - 1) == off
            prefix = text[idx.line_start(line - 1) : off]
            assert idx.position(off, "utf-16") == (line - 1, len(prefix.encode("utf-16-le")) // 2)
            assert idx.position(off, "utf-8") == (line - 1, len(prefix.encode("utf-8")))
            for enc in ENCODINGS:
                assert idx.from_unit_offset(idx.unit_offset(off, enc), enc) == off
    # the exotic characters are column characters: the key after them is on
    # its own authored line
    tpye = next(d for d in res.diagnostics if "'tpye'" in d.message)
    assert tpye.span.line == 12 and text[tpye.span.start : tpye.span.end] == "tpye"
