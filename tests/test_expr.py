"""Expression and template language: grammar, limits, typing (seed 004 §4.4,
§3.2; syntax sheet §3, §7 "Expressions")."""
from __future__ import annotations

import sys

import pytest

from loopc.compiler import types as T
from loopc.compiler.expr import (
    ExprContext,
    check_expression,
    check_path,
    check_template,
    parse_expression,
    parse_path,
    parse_template,
)
from loopc.compiler.expr import ast as A
from loopc.compiler.expr.parser import _parse_unbounded
from loopc.compiler.model import FieldSchema


def parse_ok(text: str) -> A.Expr:
    node, errs = parse_expression(text)
    assert not errs, errs
    assert node is not None
    return node


def src(text: str) -> str:
    return A.to_source(parse_ok(text))


def err1(text: str):
    node, errs = parse_expression(text)
    assert node is None and len(errs) == 1, (node, errs)
    return errs[0]


# ---------------------------------------------------------------------------
# Grammar
# ---------------------------------------------------------------------------

class TestGrammar:
    def test_literals(self) -> None:
        assert parse_ok("'a'") == A.Lit(value="a", start=0, end=3)
        assert parse_ok('"a"').value == "a"
        assert parse_ok("12").value == 12 and isinstance(parse_ok("12").value, int)
        assert parse_ok("-1.5e3").value == -1500.0
        assert parse_ok("0").value == 0
        assert parse_ok("true").value is True
        assert parse_ok("false").value is False
        assert parse_ok("null").value is None
        assert isinstance(parse_ok("[1, 2]"), A.ArrayLit)
        assert parse_ok("[]") == A.ArrayLit(items=(), start=0, end=2)

    def test_json_numbers_only(self) -> None:
        for bad in ("01", "1.", ".5", "+1", "0x10", "1e", "1e+"):
            node, errs = parse_expression(bad)
            assert errs, bad

    def test_escapes(self) -> None:
        assert parse_ok(r"'a\\b'").value == "a\\b"
        assert parse_ok(r"'it\'s'").value == "it's"
        assert parse_ok(r'"say \"hi\""').value == 'say "hi"'
        assert parse_ok(r"'\"'").value == '"'
        assert parse_ok(r"'l1\nl2\tx'").value == "l1\nl2\tx"
        assert parse_ok(r"'\u00e9\u65E5'").value == "é日"
        assert parse_ok(r"'\ud83d\ude00'").value == "😀"
        assert parse_ok("'日本語 😀'").value == "日本語 😀"

    @pytest.mark.parametrize("text,where", [
        (r"'\q'", (1, 3)), (r"'\r'", (1, 3)), (r"'\u12'", (1, 5)), (r"'\ud83d'", (1, 7)),
        (r"'\ude00x'", (1, 7)), (r"'ab\/'", (3, 5)),
    ])
    def test_bad_escapes(self, text: str, where: tuple[int, int]) -> None:
        e = err1(text)
        assert e.code == "LP3006"
        assert (e.start, e.end) == where

    def test_number_range(self) -> None:
        assert parse_ok("9007199254740991").value == 2**53 - 1
        assert parse_ok("-9007199254740991").value == -(2**53 - 1)
        assert err1("9007199254740992").code == "LP3006"
        assert err1("1e400").code == "LP3006"

    def test_paths(self) -> None:
        p = parse_ok("run.state.ready")
        assert isinstance(p, A.Path) and p.root == "run.state" and p.segments == ("ready",)
        assert parse_ok("run.input").segments == ()
        p = parse_ok("branches.legal.ok")
        assert (p.root, p.segments) == ("branches", ("legal", "ok"))
        assert parse_ok("items") == A.Path(root="items", segments=(), start=0, end=5, name_starts=(0,))
        assert parse_ok("loop.iteration").root == "loop"
        assert parse_ok("winner.value.x").segments == ("value", "x")
        p = parse_ok("input.messageId")
        assert p.segments == ("messageId",)
        # names starting with keywords are names
        assert parse_ok("input.index").segments == ("index",)
        assert parse_ok("input.nullable").segments == ("nullable",)
        assert parse_ok("intake").root == "intake"

    def test_path_segment_positions(self) -> None:
        p = parse_ok("  run.state . ready")
        assert p.name_starts == (2, 6, 14)
        assert p.segment_span(-1) == (2, 11)
        assert p.segment_span(0) == (14, 19)

    @pytest.mark.parametrize("kw", ["true", "false", "null", "in"])
    def test_keywords_are_not_segments(self, kw: str) -> None:
        e = err1(f"input.{kw}")
        assert e.code == "LP3001" and "keyword" in e.message
        assert (e.start, e.end) == (6, 6 + len(kw))

    def test_precedence(self) -> None:
        assert src("a || b && c") == "a || b && c"
        n = parse_ok("a || b && c")
        assert isinstance(n, A.Or) and isinstance(n.operands[1], A.And)
        n = parse_ok("a && b || c")
        assert isinstance(n, A.Or) and isinstance(n.operands[0], A.And)
        # ! binds tighter than comparisons
        n = parse_ok("!a == b")
        assert isinstance(n, A.Compare) and isinstance(n.left, A.Not)
        # comparisons bind tighter than &&
        n = parse_ok("a == 1 && b != 2")
        assert isinstance(n, A.And) and all(isinstance(o, A.Compare) for o in n.operands)
        n = parse_ok("!(a == b)")
        assert isinstance(n, A.Not) and isinstance(n.operand, A.Compare)
        n = parse_ok("(a || b) && c")
        assert isinstance(n, A.And) and isinstance(n.operands[0], A.Or)
        assert n.operands[0].start == 0 and n.operands[0].end == 8  # parens included

    def test_nary(self) -> None:
        n = parse_ok("a && b && c && d")
        assert isinstance(n, A.And) and len(n.operands) == 4
        n = parse_ok("a || b || c")
        assert isinstance(n, A.Or) and len(n.operands) == 3
        # parentheses keep structure
        n = parse_ok("a && (b && c)")
        assert isinstance(n, A.And) and len(n.operands) == 2

    def test_comparisons(self) -> None:
        for op in ("==", "!=", "<", "<=", ">", ">=", "in"):
            n = parse_ok(f"a {op} b")
            assert isinstance(n, A.Compare) and n.op == op
            assert (n.op_start, n.op_end) == (2, 2 + len(op))
        assert parse_ok("a!=b").op == "!="
        assert parse_ok("a in [1, 2]").right.__class__ is A.ArrayLit

    @pytest.mark.parametrize("text", ["a == b == c", "a < b < c", "a in b in c", "a == b in c"])
    def test_comparisons_do_not_chain(self, text: str) -> None:
        e = err1(text)
        assert e.code == "LP3001" and "do not chain" in e.message

    def test_calls(self) -> None:
        n = parse_ok("contains(input.tags, 'x')")
        assert isinstance(n, A.Call) and n.name == "contains" and len(n.args) == 2
        assert n.name_end == 8
        assert parse_ok("length(x)").args[0].__class__ is A.Path
        assert parse_ok("f()").args == ()  # unknown names are the checker's business

    @pytest.mark.parametrize("text,frag,where", [
        ("a ==", "end of expression", (4, 4)),
        ("a +", "no arithmetic", (2, 3)),
        ("a = 1", "'=='", (2, 3)),
        ("a & b", "'&&'", (2, 3)),
        ("'abc", "unterminated string", (0, 4)),
        ("(a", "this '(' is never closed", (0, 1)),
        ("a && (b || c", "this '(' is never closed", (5, 6)),
        ("contains([1, 2], 'x'", "this '(' is never closed", (8, 9)),
        ("contains(['(', 2], x", "this '(' is never closed", (8, 9)),
        ("a)", "unexpected ')'", (1, 2)),
        ("a.b(1)", "can be called", (3, 4)),
        ("[1, 2", "this '[' is never closed", (0, 1)),
        ("(a ==", "end of expression", (5, 5)),
        ("a b", "unexpected name 'b'", (2, 3)),
        ("{{ a }}", "template", (0, 1)),
        ("", "empty", (0, 0)),
        ("   ", "empty", (0, 3)),
    ])
    def test_syntax_errors(self, text: str, frag: str, where: tuple[int, int]) -> None:
        e = err1(text)
        assert e.code == "LP3001"
        assert frag in e.message, e.message
        assert (e.start, e.end) == where

    @pytest.mark.parametrize("text,close", [("(a", ")"), ("[1, 2", "]"), ("length(a", ")"),
                                            ("a == (b && [c", "])")])
    def test_an_unclosed_bracket_offers_its_closer_at_the_end(self, text: str, close: str) -> None:
        e = err1(text)
        assert e.replacement == close and e.fix_span == (len(text), len(text))
        fixed = text + close
        assert parse_expression(fixed)[1] == [], fixed

    def test_expected_tokens_listed(self) -> None:
        e = err1("a == ")
        assert "operand" in e.message
        e = err1("(a b")
        assert "')'" in e.message and "'&&'" in e.message

    def test_whitespace_and_newlines(self) -> None:
        n = parse_ok("a ==\n  1\r\n&& b")
        assert isinstance(n, A.And)

    def test_roundtrip(self) -> None:
        for text in ["a || b && c", "!a == b", "!(a == b)", "(a || b) && c", "a && (b && c)",
                     "contains(x, 'it\\'s')", "[1, 2.5, 'x', true, null]", "a in [1, 2] || !b"]:
            once = src(text)
            assert src(once) == once

    def test_parse_path(self) -> None:
        p, errs = parse_path("input.a.b")
        assert not errs and p is not None and p.segments == ("a", "b")
        p, errs = parse_path("input.a == 1")
        assert p is None and errs[0].code == "LP3001" and "path" in errs[0].message
        p, errs = parse_path("(input.a)")
        assert p is None and errs


# ---------------------------------------------------------------------------
# Limits (seed 004 §3.2)
# ---------------------------------------------------------------------------

class TestLimits:
    def test_8_kib_bytes(self) -> None:
        ok = "'" + "x" * (8192 - 2) + "'"
        assert parse_expression(ok)[1] == []
        e = err1("'" + "x" * (8192 - 1) + "'")
        assert e.code == "LP3002" and e.start == 8192
        # UTF-8 bytes, not code points: 3-byte CJK
        text = "'" + "日" * 2731 + "'"  # 8195 bytes, 2733 code points
        e = err1(text)
        assert e.code == "LP3002"
        assert e.start == 2731  # first code point beyond 8,192 bytes

    def test_nesting_64_tree(self) -> None:
        ok = "!" * 63 + "a"
        assert parse_expression(ok)[1] == []
        e = err1("!" * 64 + "a")
        assert e.code == "LP3003"

    def test_nesting_brackets(self) -> None:
        assert parse_expression("(" * 64 + "a" + ")" * 64)[1] == []
        e = err1("(" * 65 + "a" + ")" * 65)
        assert e.code == "LP3003" and (e.start, e.end) == (64, 65)
        e = err1("[" * 65 + "]" * 65)
        assert e.code == "LP3003"
        # brackets inside strings do not count
        assert parse_expression("'" + "(" * 100 + "'")[1] == []

    def test_200_deep_parens_no_recursion(self) -> None:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(120)
        try:
            e = err1("(" * 200 + "a" + ")" * 200)
            e2 = err1("!(" * 200 + "a" + ")" * 200)
            e3 = err1("!" * 5000 + "a")
        finally:
            sys.setrecursionlimit(limit)
        assert e.code == e2.code == e3.code == "LP3003"

    def test_nary_chain_is_depth_2(self) -> None:
        text = " && ".join(["a"] * 1000)
        assert len(text.encode()) <= 8192
        n = parse_ok(text)
        assert isinstance(n, A.And) and len(n.operands) == 1000
        n = parse_ok(" || ".join(["a == 1"] * 600))
        assert isinstance(n, A.Or) and len(n.operands) == 600

    @pytest.mark.timeout(60)  # a hang guard, not a speed test (speed: benchmarks/)
    def test_5000_term_chain_fast_without_recursion(self) -> None:
        text = " && ".join(f"input.f{i} == {i}" for i in range(5000))
        assert parse_expression(text)[1][0].code == "LP3002"  # the budget still applies
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(150)
        try:
            node, errs = _parse_unbounded(text)
            assert not errs and isinstance(node, A.And) and len(node.operands) == 5000
            ctx = ExprContext({"input": T.OBJECT})
            from loopc.compiler.expr import check_ast
            checked = check_ast(node, ctx, T.BOOLEAN)
            A.to_source(node)
        finally:
            sys.setrecursionlimit(limit)
        assert checked.ok and checked.type == T.BOOLEAN

    def test_template_64_kib(self) -> None:
        ok = "x" * 65536
        assert parse_template(ok)[1] == []
        tpl, errs = parse_template("x" * 65537)
        assert tpl is None and errs[0].code == "LP3004" and errs[0].start == 65536
        # each interpolation is still an expression with its own 8 KiB limit
        tpl, errs = parse_template("{{ '" + "y" * 9000 + "' }}")
        assert errs[0].code == "LP3002" and errs[0].start == 2 + 8192


# ---------------------------------------------------------------------------
# Templates
# ---------------------------------------------------------------------------

class TestTemplates:
    def test_parts(self) -> None:
        tpl, errs = parse_template("Hi {{ input.name }}, v{{input.v}}!")
        assert not errs and tpl is not None
        assert tpl.parts[0] == "Hi "
        ip = tpl.parts[1]
        assert isinstance(ip, A.Interp) and (ip.start, ip.end) == (3, 19)
        assert isinstance(ip.expr, A.Path) and (ip.expr.start, ip.expr.end) == (6, 16)
        assert ip.expr.name_starts == (6, 12)
        assert tpl.parts[2] == ", v" and tpl.parts[4] == "!"
        assert not tpl.is_single and not tpl.is_constant

    def test_literal_braces(self) -> None:
        tpl, errs = parse_template("{{ '{{' }} and }} stay")
        assert not errs and tpl is not None
        assert isinstance(tpl.parts[0], A.Interp) and tpl.parts[0].expr.value == "{{"
        assert tpl.parts[1] == " and }} stay"
        tpl, errs = parse_template("{{ '}}' }}")
        assert not errs and tpl.parts[0].expr.value == "}}"  # type: ignore[union-attr]
        tpl, errs = parse_template('{{ "a }} b" }}')
        assert not errs and tpl.parts[0].expr.value == "a }} b"  # type: ignore[union-attr]

    def test_single_and_constant(self) -> None:
        tpl, _ = parse_template("{{ input.approver }}")
        assert tpl is not None and tpl.is_single
        tpl, _ = parse_template(" {{ input.approver }}")
        assert tpl is not None and not tpl.is_single
        tpl, _ = parse_template("plain text")
        assert tpl is not None and tpl.is_constant and tpl.parts == ("plain text",)
        tpl, _ = parse_template("")
        assert tpl is not None and tpl.parts == ()

    def test_errors_are_template_relative(self) -> None:
        tpl, errs = parse_template("日本語 😀 {{ input.x + }}")
        assert tpl is None and len(errs) == 1
        e = errs[0]
        assert e.code == "LP3001" and (e.start, e.end) == (17, 18)
        assert "日本語 😀 {{ input.x + }}"[e.start] == "+"

    def test_unclosed_and_empty(self) -> None:
        tpl, errs = parse_template("a {{ b")
        assert errs[0].code == "LP3005" and (errs[0].start, errs[0].end) == (2, 4)
        tpl, errs = parse_template("a {{ }} b")
        assert errs[0].code == "LP3005" and (errs[0].start, errs[0].end) == (2, 7)
        tpl, errs = parse_template("{{ 'x }}")  # the quote swallows the braces
        assert errs[0].code == "LP3005"

    def test_several_errors(self) -> None:
        tpl, errs = parse_template("{{ a + }} and {{ b == }}")
        assert [e.code for e in errs] == ["LP3001", "LP3001"]
        assert errs[0].start < errs[1].start

    def test_literal_brace_hint(self) -> None:
        tpl, errs = parse_template("Use {{ to open: {{ input.topic }}")
        assert errs and "{{ '{{' }}" in errs[0].message


# ---------------------------------------------------------------------------
# Typing (sheet §7)
# ---------------------------------------------------------------------------

def fs(t: str, required: bool = True, **kw) -> FieldSchema:
    return FieldSchema(t, required, **kw)


INPUT = {
    "sev": fs("enum", values=("high", "low")),
    "level": fs("enum", values=("high", "mid")),
    "color": fs("enum", values=("red", "blue")),
    "n": fs("number"),
    "who": fs("member"),
    "ag": fs("agent"),
    "tags": fs("array", items=fs("string")),
    "agents": fs("array", items=fs("agent")),
    "d": fs("duration"),
    "at": fs("datetime"),
    "opt": fs("string", False),
    "s": fs("string"),
    "ok": fs("boolean"),
    "obj": fs("object"),
    "room": fs("scope"),
    "chan": fs("channel"),
    "wi": fs("work_items"),
    "defaulted": fs("string", False, default="x"),
}
CTX = ExprContext({
    "input": T.record_of(INPUT),
    "run.input": T.record_of({}),
    "run.state": T.record_of({"ready": fs("boolean", False, default=False)}),
    "item": T.ITEM,
}, {"output": "output.* is only available in an edge bind"})


def check(text: str, expected: T.Type | None = T.BOOLEAN):
    return check_expression(text, CTX, expected)


def codes(text: str, expected: T.Type | None = T.BOOLEAN) -> list[str]:
    return [e.code for e in check(text, expected).errors]


class TestTyping:
    @pytest.mark.parametrize("text", [
        "input.sev == 'high'", "input.sev != 'low'", "'high' == input.sev", "input.sev == input.s",
        "input.sev == input.level", "input.n > 3 && input.ok", "input.n >= -1.5",
        "input.who == 'mem_ana'", "input.ag != 'agt_x'", "input.d < 'PT1H'", "input.d >= input.d",
        "input.at > '2024-05-01T09:00:00Z'", "input.s < 'b'", "input.sev < 'low'",
        "input.opt == null", "null != input.opt", "input.obj.a.b == 3", "input.obj.x",
        "input.room.kind == 'dm'", "input.room.scopeId == 'tsk_api'", "input.chan == '#release'",
        "input.ag in ['agt_a', 'agt_b']", "'agt_a' in input.agents", "input.sev in ['high']",
        "input.s in input.tags", "contains(input.tags, 'x')", "contains(input.s, 'x')",
        "contains(input.agents, 'agt_x')", "contains(input.agents, input.ag)",
        "startsWith(input.s, 'a') || endsWith(input.s, input.s)", "startsWith(input.sev, 'h')",
        "length(input.tags) > 0", "length(input.s) == 3", "length(input.sev) == 4",
        "!input.ok", "!!input.ok", "run.state.ready == true", "run.state.ready",
        "input.ok && (input.n > 1 || input.s == 'x')", "item.key == 'a'",
        "contains(item.dependsOn, 'k')", "item.dependencies.anything", "true", "1 == 1",
        "[1, 2] == [1, 2] || true",
    ])
    def test_well_typed(self, text: str) -> None:
        if text == "[1, 2] == [1, 2] || true":
            assert codes(text) == ["LP3024"]
            return
        c = check(text, None)
        assert c.ok, c.errors
        if text not in ("input.obj.x",):
            assert check(text).ok

    @pytest.mark.parametrize("text,code,bad", [
        ("input.sev == 'medium'", "LP3025", "'medium'"),
        ("input.who == 'bad id'", "LP3025", "'bad id'"),
        ("input.d < 'PT1X'", "LP3025", "'PT1X'"),
        ("input.at < '2024-13-01T00:00:00Z'", "LP3025", "'2024-13-01T00:00:00Z'"),
        ("input.chan == 'release'", "LP3025", "'release'"),
        ("input.sev in ['high', 'nope']", "LP3025", "'nope'"),
        ("'bogus' in input.agents", "LP3025", "'bogus'"),
        ("input.n == 'x'", "LP3020", "input.n == 'x'"),
        ("input.who == input.ag", "LP3020", "input.who == input.ag"),
        ("input.sev == input.color", "LP3020", "input.sev == input.color"),
        ("input.s in [1, 2]", "LP3020", "input.s in [1, 2]"),
        ("input.n == null", "LP3027", "input.n == null"),
        ("input.defaulted != null", "LP3027", "input.defaulted != null"),
        ("input.opt < null", "LP3024", "input.opt < null"),
        ("input.tags == input.tags", "LP3024", "input.tags"),
        ("input.room == input.room", "LP3024", "input.room"),
        ("input.ok < true", "LP3024", "input.ok"),
        ("input.who < input.who", "LP3024", "input.who"),
        ("input.n in input.n", "LP3024", "input.n"),
        ("input.tags in input.tags", "LP3024", "input.tags"),
        ("!input.n", "LP3023", "input.n"),
        ("input.s && input.ok", "LP3023", "input.s"),
        ("input.ok || 1", "LP3023", "1"),
        ("startswith(input.s, 'a')", "LP3021", "startswith"),
        ("upper(input.s) == 'A'", "LP3021", "upper"),
        ("contains(input.n, 1)", "LP3022", "input.n"),
        ("contains(input.tags, 1)", "LP3022", "1"),
        ("contains(input.s)", "LP3022", "contains(input.s)"),
        ("startsWith(input.s, 1)", "LP3022", "1"),
        ("startsWith(input.who, 'mem')", "LP3022", "input.who"),
        ("length(input.n) > 1", "LP3022", "input.n"),
        ("length(input.s, input.s) > 1", "LP3022", "length(input.s, input.s)"),
        ("[1, 'a'] == [1]", "LP3026", "'a'"),
        ("input.n in [1, true]", "LP3026", "true"),
        ("input.nope == 1", "LP3204", "nope"),
        ("input.n.x == 1", "LP3205", "x"),
        ("input.room.id == 'x'", "LP3204", "id"),
        ("output.x == 1", "LP3202", "output"),
        ("loop.iteration == 1", "LP3202", "loop"),
        ("steps.a.output == 1", "LP3201", "steps"),
        ("inputs.a == 1", "LP3201", "inputs"),
        ("run.foo == 1", "LP3201", "run"),
        ("input.sev == high", "LP3201", "high"),
        ("input.n", "LP3020", "input.n"),
    ])
    def test_errors(self, text: str, code: str, bad: str) -> None:
        c = check(text)
        assert [e.code for e in c.errors] == [code], c.errors
        e = c.errors[0]
        assert text[e.start:e.end] == bad, (text[e.start:e.end], e.message)

    def test_messages(self) -> None:
        e = check("input.sevv == 'x'").errors[0]
        assert "did you mean 'sev'" in e.message
        e = check("startswith(input.s, 'a')").errors[0]
        assert "did you mean 'startsWith'" in e.message
        e = check("output.x == 1").errors[0]
        assert e.message == "output.* is only available in an edge bind"
        e = check("item2.x == 1").errors[0]
        assert "did you mean 'item'" in e.message
        e = check("approve").errors[0]
        assert "'approve'" in e.message and "quotes" in e.message

    def test_no_cascade(self) -> None:
        # one defect, one diagnostic: the unknown field makes its subtree unknown
        assert codes("input.nope == 1 && input.nope2 > 'x' && !input.nope3") == ["LP3204"] * 3
        assert codes("length(input.nope) > 1") == ["LP3204"]
        assert codes("upper(input.s) == 'A' && true") == ["LP3021"]

    def test_literals_take_the_expected_type(self) -> None:
        c = check("input.d < 'PT1H'")
        assert c.ast.right.type == T.DURATION  # type: ignore[union-attr]
        c = check("input.sev == 'high'")
        assert c.ast.right.type.kind == "enum"  # type: ignore[union-attr]
        c = check("input.ag in ['agt_a', 'agt_b']")
        assert c.ast.right.type == T.array_of(T.AGENT)  # type: ignore[union-attr]
        assert all(i.type == T.AGENT for i in c.ast.right.items)  # type: ignore[union-attr]
        c = check("'agt_a' in input.agents")
        assert c.ast.left.type == T.AGENT  # type: ignore[union-attr]
        c = check_expression("'mem_ana'", CTX, T.MEMBER)
        assert c.ok and c.type == T.MEMBER
        assert check_expression("'PT5M'", CTX, T.DURATION).type == T.DURATION
        assert [e.code for e in check_expression("'5 minutes'", CTX, T.DURATION).errors] == ["LP3025"]
        assert [e.code for e in check_expression("input.s", CTX, T.MEMBER).errors] == ["LP3020"]
        c = check_expression("['mem_a', input.who]", CTX, None)
        assert c.ok and c.type == T.array_of(T.MEMBER)

    def test_expected_types(self) -> None:
        assert check_expression("input.sev", CTX, T.STRING).ok  # enum → string
        assert not check_expression("input.s", CTX, T.enum_of(["high"])).ok
        assert check_expression("input.ag", CTX, T.RESPONDER).ok  # agent → responder
        assert not check_expression("input.chan", CTX, T.SCOPE).ok  # never channel → scope
        assert check_expression("input.obj.x", CTX, T.SCOPE).ok  # unknown: run-time check
        assert check_expression("input.agents", CTX, T.array_of(T.RESPONDER)).ok
        assert check_expression("[]", CTX, T.array_of(T.AGENT)).ok
        assert check_expression("null", CTX, T.with_optional(T.STRING)).ok
        assert not check_expression("null", CTX, T.STRING).ok
        c = check_expression("input.n", CTX, T.NUMBER)
        assert c.ok and c.type == T.NUMBER

    def test_types_of_results(self) -> None:
        assert check("input.n == 1").type == T.BOOLEAN
        assert check_expression("length(input.s)", CTX).type == T.NUMBER
        assert check_expression("input.opt", CTX).type == T.with_optional(T.STRING)
        assert check_expression("input.obj.a", CTX).type.kind == "unknown"
        assert check_expression("[1, 2]", CTX).type == T.array_of(T.NUMBER)
        assert check_expression("['high', input.sev]", CTX).type == T.array_of(T.enum_of(["high", "low"]))
        assert check_expression("[input.s, input.sev]", CTX).type == T.array_of(T.STRING)
        assert check_expression("[]", CTX).type == T.array_of(None)
        assert check_expression("run.input", CTX).type.kind == "object"

    def test_optional_propagates(self) -> None:
        ctx = ExprContext({"branches": T.branches_of(["a"], {"x": fs("number")}, optional=True)})
        c = check_expression("branches.a.x == null", ctx, T.BOOLEAN)
        assert c.ok
        c = check_expression("branches.a.x", ctx)
        assert c.type == T.with_optional(T.NUMBER)
        ctx = ExprContext({"branches": T.branches_of(["a"], {"x": fs("number")})})
        assert [e.code for e in check_expression("branches.a.x == null", ctx).errors] == ["LP3027"]
        assert [e.code for e in check_expression("branches.b.x == 1", ctx).errors] == ["LP3204"]

    def test_context_roots(self) -> None:
        ctx = ExprContext({
            "items": T.ITEMS,
            "winner": T.winner_of({"v": fs("string")}),
            "loop": T.loop_of({"draft": fs("string")}),
        })
        assert check_expression("length(items) > 1", ctx, T.BOOLEAN).ok
        assert [e.code for e in check_expression("items.key == 'a'", ctx).errors] == ["LP3205"]
        assert check_expression("winner.key == 'legal' && winner.value.v == 'x'", ctx, T.BOOLEAN).ok
        assert check_expression("loop.iteration < 3 && loop.state.draft != ''", ctx, T.BOOLEAN).ok
        assert [e.code for e in check_expression("input.x == 1", ctx).errors] == ["LP3202"]

    def test_custom_resolve(self) -> None:
        from loopc.compiler.expr import ContextError

        class Ctx(ExprContext):
            def resolve(self, root, segments):
                if segments and segments[-1] == "secret":
                    return ContextError("LP3202", "no secrets", len(segments) - 1)
                return T.STRING

        c = check_expression("input.a.secret == 'x'", Ctx({}))
        assert [(e.code, e.start, e.end) for e in c.errors] == [("LP3202", 8, 14)]

    def test_broken_context_does_not_crash(self) -> None:
        class Bad(ExprContext):
            def resolve(self, root, segments):
                raise RuntimeError("boom")

        c = check_expression("input.a == 1", Bad({}))
        assert c.errors and c.errors[0].code == "LP3202"

    def test_check_path(self) -> None:
        c = check_path("input.who", CTX, T.MEMBER)
        assert c.ok and isinstance(c.ast, A.Path) and c.type == T.MEMBER
        c = check_path("input.who", CTX, T.AGENT)
        assert [e.code for e in c.errors] == ["LP3020"]
        c = check_path("input.a == 1", CTX)
        assert c.ast is None and c.errors[0].code == "LP3001"


class TestTemplateTyping:
    def test_single_interp_has_expr_type(self) -> None:
        c = check_template("{{ input.who }}", CTX)
        assert c.ok and c.type == T.MEMBER and c.passthrough
        c = check_template("{{ input.who }}", CTX, T.MEMBER)
        assert c.ok and c.type == T.MEMBER and c.passthrough
        c = check_template("{{ input.s }}", CTX, T.MEMBER)
        assert [e.code for e in c.errors] == ["LP3020"]
        c = check_template("{{ 'mem_ana' }}", CTX, T.MEMBER)
        assert c.ok and c.type == T.MEMBER

    def test_single_interp_rendered_where_string_expected(self) -> None:
        c = check_template("{{ input.n }}", CTX, T.STRING)
        assert c.ok and c.type == T.STRING and not c.passthrough
        c = check_template("{{ input.sev }}", CTX, T.STRING)
        assert c.ok and c.type == T.STRING and c.passthrough
        c = check_template("{{ input.tags }}", CTX, T.STRING)
        assert [e.code for e in c.errors] == ["LP3030"]

    def test_multi_part_is_string(self) -> None:
        c = check_template("Hi {{ input.who }} ({{ input.n }}, {{ input.ok }}, {{ input.d }})", CTX)
        assert c.ok and c.type == T.STRING and not c.passthrough
        c = check_template("Hi {{ input.who }}", CTX, T.MEMBER)
        assert [e.code for e in c.errors] == ["LP3020"]

    @pytest.mark.parametrize("path", ["input.tags", "input.obj", "input.room", "input.wi",
                                      "item.responder", "run.input"])
    def test_non_scalar_interpolation(self, path: str) -> None:
        text = f"x {{{{ {path} }}}} y"
        c = check_template(text, CTX)
        assert [e.code for e in c.errors] == ["LP3030"]
        e = c.errors[0]
        assert text[e.start:e.end] == f"{{{{ {path} }}}}"

    def test_unknown_interpolation_is_runtime_checked(self) -> None:
        assert check_template("x {{ input.obj.a }}", CTX).ok

    def test_constant_template(self) -> None:
        c = check_template("mem_ana", CTX, T.MEMBER)
        assert c.ok and c.type == T.MEMBER
        c = check_template("not an id", CTX, T.MEMBER)
        assert [e.code for e in c.errors] == ["LP3025"]
        c = check_template("plain", CTX, T.STRING)
        assert c.ok and c.type == T.STRING

    def test_agent_in_target(self) -> None:
        text = "dm:@{{ input.ag }}"
        c = check_template(text, CTX, T.STRING, forbid_agent=True)
        assert [e.code for e in c.errors] == ["LP3402"]
        assert text[c.errors[0].start:c.errors[0].end] == "{{ input.ag }}"
        assert check_template(text, CTX, T.STRING).ok  # text: agents render

    def test_literal_braces_typed(self) -> None:
        c = check_template("{{ '{{' }} x", CTX, T.STRING)
        assert c.ok and c.type == T.STRING

    def test_errors_relative_to_template(self) -> None:
        text = "日本語 😀 {{ input.nope }}"
        c = check_template(text, CTX)
        assert text[c.errors[0].start:c.errors[0].end] == "nope"

    def test_typed_ast(self) -> None:
        c = check_template("a {{ input.n }} b", CTX)
        ip = c.ast.parts[1]  # type: ignore[union-attr]
        assert isinstance(ip, A.Interp) and ip.expr.type == T.NUMBER


# ---------------------------------------------------------------------------
# Speed
# ---------------------------------------------------------------------------

@pytest.mark.timeout(60)  # a hang guard; the speed itself is measured in benchmarks/
def test_parse_typical_expression_repeatedly() -> None:
    text = "input.severity == 'high' && length(input.tags) > 2 || run.state.ready"
    first = parse_expression(text)
    for _ in range(200):
        assert parse_expression(text)[1] == first[1] == []


# ---------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_KEYWORDS = {"true", "false", "null", "in", "run"}
_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True).filter(lambda s: s not in _KEYWORDS)
_lits = st.one_of(
    st.text(max_size=8), st.integers(-(2**53 - 1), 2**53 - 1),
    st.floats(allow_nan=False, allow_infinity=False), st.booleans(), st.none(),
)


def _mk(cls, **kw):
    return cls(start=0, end=0, **kw)


_leaves = st.one_of(
    _lits.map(lambda v: _mk(A.Lit, value=v)),
    st.tuples(st.sampled_from(A.ROOTS) | _names, st.lists(_names, max_size=3)).map(
        lambda t: _mk(A.Path, root=t[0], segments=tuple(t[1]))),
)


def _extend(children):
    return st.one_of(
        children.map(lambda c: _mk(A.Not, operand=c)),
        st.lists(children, min_size=2, max_size=4).map(lambda cs: _mk(A.And, operands=tuple(cs))),
        st.lists(children, min_size=2, max_size=4).map(lambda cs: _mk(A.Or, operands=tuple(cs))),
        st.tuples(st.sampled_from(A.COMPARE_OPS), children, children).map(
            lambda t: _mk(A.Compare, op=t[0], left=t[1], right=t[2])),
        st.tuples(st.sampled_from(A.FUNCTIONS), st.lists(children, max_size=3)).map(
            lambda t: _mk(A.Call, name=t[0], args=tuple(t[1]))),
        st.lists(children, max_size=3).map(lambda cs: _mk(A.ArrayLit, items=tuple(cs))),
    )


_exprs = st.recursive(_leaves, _extend, max_leaves=12)


def _shape(node: A.Expr):
    """Structure without positions or types."""
    def f(n, kids):
        if isinstance(n, A.Lit):
            return ("lit", type(n.value).__name__, n.value)
        if isinstance(n, A.Path):
            return ("path", n.root, n.segments)
        extra = getattr(n, "op", None) or getattr(n, "name", None)
        return (n.__class__.__name__, extra, kids)
    return A.map_postorder(node, f)


@settings(max_examples=300, deadline=None)
@given(_exprs)
def test_render_then_parse_roundtrips(node: A.Expr) -> None:
    text = A.to_source(node)
    parsed, errs = parse_expression(text)
    if errs:
        assert errs[0].code in ("LP3002", "LP3003"), (text, errs)
        return
    assert _shape(parsed) == _shape(node), text
    for n in A.walk(parsed):
        assert 0 <= n.start < n.end <= len(text)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab.()[]!=<>&|,'\"\\{} 01-einulstrfc")), max_size=40))
def test_parser_never_raises(text: str) -> None:
    node, errs = parse_expression(text)
    assert (node is None) == bool(errs)
    for e in errs:
        assert 0 <= e.start <= e.end <= len(text) and e.code.startswith("LP30")
    tpl, terrs = parse_template("x {{ " + text + " }} y")
    for e in terrs:
        assert 0 <= e.start <= e.end <= len(text) + 10
    if node is not None:
        check_expression(text, CTX, T.BOOLEAN)  # never raises either
