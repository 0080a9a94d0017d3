"""Expression and template parser (docs/reference.md#expressions,
docs/reference.md#templates, docs/reference.md#budgets).

* :func:`parse_expression` — one bounded expression (``when``, ``{expr: ...}``,
  the inside of ``{{ }}``) → :mod:`~loopc.compiler.expr.ast` tree;
* :func:`parse_template` — a string with ``{{ expression }}`` segments;
* :func:`parse_path` — the dotted path of ``{ref: ...}`` (a :class:`Path`).

The grammar (``grammar.lark``) is LALR(1) with lark's basic lexer (keywords
``true false null in`` are never names, so they are not path segments).  The
parser is built once per process, lazily, with an inline transformer: lark
calls it on every reduction, so AST construction is iterative (no recursion
on hostile input).  Budgets (docs/reference.md#budgets): an expression is at most 8 KiB
of UTF-8 and nesting 64; a template at most 64 KiB.  *Nesting* is the larger
of the parsed tree's depth (``&&``/``||`` are n-ary, so a chain of 5,000
``&&`` is depth 2) and the bracket depth of ``(``/``[``; the bracket depth is
checked by a linear pre-scan before lark runs, and the tree depth while the
tree is built, so neither 200 nested parentheses nor 100,000 ``!`` ever
recurse.

Errors are :class:`ExprError` with code-point offsets relative to the parsed
text (the whole template text for templates).  Parsing never raises on bad
input.
"""
from __future__ import annotations

import _thread
import functools
import re
from typing import Any, Protocol

from loopc.value import Value
from loopc.limits import MAX_SAFE_INTEGER, number_text_problem, underflow_problem
from loopc.compiler.expr import ast as A

MAX_EXPR_BYTES = 8 * 1024
MAX_TEMPLATE_BYTES = 64 * 1024
MAX_NESTING = 64
MAX_SAFE_INT = MAX_SAFE_INTEGER

# Codes (registered in loopc/codes/types.py).
SYNTAX = "LP3001"
TOO_LONG = "LP3002"
TOO_DEEP = "LP3003"
TEMPLATE_TOO_LONG = "LP3004"
TEMPLATE_SYNTAX = "LP3005"
BAD_LITERAL = "LP3006"


class ExprError(Value):
    """A problem in an expression or template.

    ``code`` is an LP3xxx code, ``start``/``end`` code-point offsets (end
    exclusive; ``start == end`` marks a point, e.g. the end of the text)
    relative to the parsed text.  Map them to a source span with
    :func:`loopc.compiler.scalarpos.value_span`.
    """

    code: str
    message: str
    start: int
    end: int
    #: suggested replacement text for ``[start, end)`` (a did-you-mean fix)
    replacement: str | None = None
    #: what ``replacement`` replaces when not ``[start, end)`` (the inside
    #: of a string literal, whose quotes stay as written)
    fix_span: tuple[int, int] | None = None

    def shifted(self, delta: int) -> "ExprError":
        fs = None if self.fix_span is None else (self.fix_span[0] + delta, self.fix_span[1] + delta)
        return self.evolve(start=self.start + delta, end=self.end + delta, fix_span=fs)


class _Fail(Exception):
    """Raised by transformer callbacks; aborts the parse with one error."""

    def __init__(self, error: ExprError) -> None:
        super().__init__(error.message)
        self.error = error


# ---------------------------------------------------------------------------
# Inline transformer: builds AST nodes on every LALR reduction
# ---------------------------------------------------------------------------

class _Lexed(Protocol):
    """A lexed token as the transformer receives it (a lark ``Token``): lark
    types the offsets Optional, but the lexer always sets them."""

    type: str
    start_pos: int
    end_pos: int


def _build_transformer() -> Any:
    from lark import Transformer

    class Build(Transformer):
        """Lark callbacks → AST.  Every callback returns ``(node, depth)``
        (tokens pass through as lark ``Token``), so the tree depth is known
        as soon as a node is built and an over-deep tree aborts at once."""

        def literal(self, kids: list[_Lexed]) -> tuple[A.Expr, int]:
            (tok,) = kids
            t = tok.type
            s, e = tok.start_pos, tok.end_pos
            if t == "STRING":
                return A.Lit(value=_unescape(str(tok), s), start=s, end=e), 1
            if t == "NUMBER":
                return A.Lit(value=_number(str(tok), s, e), start=s, end=e), 1
            if t == "TRUE":
                return A.Lit(value=True, start=s, end=e), 1
            if t == "FALSE":
                return A.Lit(value=False, start=s, end=e), 1
            return A.Lit(value=None, start=s, end=e), 1

        def path(self, kids: list[_Lexed]) -> tuple[A.Expr, int]:
            names = [str(k) for k in kids]
            if len(names) >= 2 and names[0] == "run" and names[1] in ("input", "state"):
                root, segs = "run." + names[1], tuple(names[2:])
            else:
                root, segs = names[0], tuple(names[1:])
            return A.Path(root=root, segments=segs, start=kids[0].start_pos, end=kids[-1].end_pos,
                          name_starts=tuple(k.start_pos for k in kids)), 1

        def call(self, kids: list[Any]) -> tuple[A.Expr, int]:
            name = kids[0]
            rpar = kids[-1]
            args = [k for k in kids[2:-1] if k is not None]
            d = 1 + max((a[1] for a in args), default=0)
            node = A.Call(name=str(name), args=tuple(a[0] for a in args), start=name.start_pos,
                          end=rpar.end_pos, name_end=name.end_pos)
            return _check_depth(node, d)

        def array(self, kids: list[Any]) -> tuple[A.Expr, int]:
            lsqb, rsqb = kids[0], kids[-1]
            items = [k for k in kids[1:-1] if k is not None]
            d = 1 + max((a[1] for a in items), default=0)
            node = A.ArrayLit(items=tuple(a[0] for a in items), start=lsqb.start_pos, end=rsqb.end_pos)
            return _check_depth(node, d)

        def group(self, kids: list[Any]) -> tuple[A.Expr, int]:
            lpar, (inner, d), rpar = kids
            return inner.evolve(start=lpar.start_pos, end=rpar.end_pos), d

        def not_expr(self, kids: list[Any]) -> tuple[A.Expr, int]:
            bang, (operand, d) = kids
            node = A.Not(operand=operand, start=bang.start_pos, end=operand.end)
            return _check_depth(node, d + 1)

        def compare(self, kids: list[Any]) -> tuple[A.Expr, int]:
            (left, dl), op, (right, dr) = kids
            node = A.Compare(op=str(op), left=left, right=right, start=left.start, end=right.end,
                             op_start=op.start_pos, op_end=op.end_pos)
            return _check_depth(node, 1 + max(dl, dr))

        def and_expr(self, kids: list[Any]) -> tuple[A.Expr, int]:
            ops = tuple(k[0] for k in kids)
            node = A.And(operands=ops, start=ops[0].start, end=ops[-1].end)
            return _check_depth(node, 1 + max(k[1] for k in kids))

        def or_expr(self, kids: list[Any]) -> tuple[A.Expr, int]:
            ops = tuple(k[0] for k in kids)
            node = A.Or(operands=ops, start=ops[0].start, end=ops[-1].end)
            return _check_depth(node, 1 + max(k[1] for k in kids))

    return Build()


def _check_depth(node: A.Expr, depth: int) -> tuple[A.Expr, int]:
    if depth > MAX_NESTING:
        raise _Fail(ExprError(
            TOO_DEEP, f"expression nesting is deeper than {MAX_NESTING} levels; simplify it",
            node.start, node.end))
    return node, depth


_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t"}
_HEX = frozenset("0123456789abcdefABCDEF")


def _unescape(tok: str, start: int) -> str:
    """Value of a quoted string token (``start`` = offset of its quote)."""
    body = tok[1:-1]
    if "\\" not in body:
        return body
    out: list[str] = []
    i = 0
    n = len(body)
    while i < n:
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        nxt = body[i + 1] if i + 1 < n else ""
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
            continue
        if nxt == "u":
            hexs = body[i + 2:i + 6]
            if len(hexs) < 4 or not set(hexs) <= _HEX:
                raise _Fail(ExprError(BAD_LITERAL, "'\\u' must be followed by exactly four hex digits",
                                      start + 1 + i, start + 1 + min(n, i + 2 + len(hexs))))
            cp = int(hexs, 16)
            width = 6
            if 0xD800 <= cp <= 0xDBFF:
                lo = body[i + 6:i + 12]
                if len(lo) == 6 and lo[:2] == "\\u" and set(lo[2:]) <= _HEX and 0xDC00 <= int(lo[2:], 16) <= 0xDFFF:
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (int(lo[2:], 16) - 0xDC00)
                    width = 12
                else:
                    raise _Fail(ExprError(BAD_LITERAL, f"'\\u{hexs}' is an unpaired surrogate",
                                          start + 1 + i, start + 1 + i + 6))
            elif 0xDC00 <= cp <= 0xDFFF:
                raise _Fail(ExprError(BAD_LITERAL, f"'\\u{hexs}' is an unpaired surrogate",
                                      start + 1 + i, start + 1 + i + 6))
            out.append(chr(cp))
            i += width
            continue
        shown = nxt if nxt not in ("\n", "\r") else "a line break"
        raise _Fail(ExprError(
            BAD_LITERAL,
            f"unknown escape '\\{shown}' in string; allowed: \\\\ \\' \\\" \\n \\t \\uXXXX",
            start + 1 + i, start + 1 + i + (2 if nxt else 1)))
    return "".join(out)


def _number(text: str, start: int, end: int) -> int | float:
    why = number_text_problem(text)
    if why is not None:
        raise _Fail(ExprError(BAD_LITERAL, why, start, end))
    if "." not in text and "e" not in text and "E" not in text:
        if len(text.lstrip("-+").lstrip("0")) > 16:
            # beyond ±(2^53−1); not converted (Python refuses > 4,300 digits)
            shown = text if len(text) <= 40 else f"{text[:20]}…({len(text)} digits)"
            raise _Fail(ExprError(BAD_LITERAL, f"integer {shown} is outside ±(2^53−1)", start, end))
        v = int(text)
        if abs(v) > MAX_SAFE_INT:
            raise _Fail(ExprError(BAD_LITERAL, f"integer {text} is outside ±(2^53−1)", start, end))
        return v
    f = float(text)
    if f != f or f in (float("inf"), float("-inf")):
        raise _Fail(ExprError(BAD_LITERAL, f"number {text} is not finite", start, end))
    why = underflow_problem(text, f)
    if why is not None:
        raise _Fail(ExprError(BAD_LITERAL, why, start, end))
    return f


# ---------------------------------------------------------------------------
# The lark parser (built once, lazily; thread-safe)
# ---------------------------------------------------------------------------

_LOCK = _thread.allocate_lock()  # threading.Lock() itself; importing threading costs start-up
_PARSER: Any = None


def _parser() -> Any:
    global _PARSER
    if _PARSER is None:
        with _LOCK:
            if _PARSER is None:
                from lark import Lark

                import pathlib

                grammar = (pathlib.Path(__file__).with_name("grammar.lark")).read_text("utf-8")
                # cache=True: lark keeps the LALR tables in a temp file keyed by
                # the grammar's hash (85 ms → 2 ms on later process starts);
                # an unreadable or unwritable cache is ignored by lark.
                _PARSER = Lark(grammar, parser="lalr", lexer="basic", maybe_placeholders=True,
                               transformer=_build_transformer(), cache=True)
    return _PARSER


_FRIENDLY = {
    "_AND": "'&&'", "_OR": "'||'", "RPAR": "')'", "LPAR": "'('", "RSQB": "']'", "LSQB": "'['",
    "_COMMA": "','", "_DOT": "'.'", "$END": "end of expression", "CMP": "a comparison operator",
    "IN": "'in'", "BANG": "'!'", "NAME": "a name", "STRING": "a string", "NUMBER": "a number",
    "TRUE": "true", "FALSE": "false", "NULL": "null",
}
_OPERAND_START = frozenset(("LSQB", "FALSE", "NULL", "NUMBER", "BANG", "TRUE", "NAME", "LPAR", "STRING"))
_TOKEN_DESC = {
    "$END": "the end of the expression", "STRING": "string", "NUMBER": "number", "NAME": "name",
}


def _expected_text(expected: set[str]) -> str:
    names: list[str] = []
    rest = set(expected)
    if _OPERAND_START <= rest:
        names.append("an operand (literal, path, call, '[', '(' or '!')")
        rest -= _OPERAND_START
    order = ["CMP", "IN", "_AND", "_OR", "_COMMA", "_DOT", "RPAR", "RSQB", "LPAR", "$END"]
    for k in order + sorted(rest - set(order)):
        if k in rest:
            names.append(_FRIENDLY.get(k, k))
    if not names:
        return ""
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " or " + names[-1]


_CHAR_HINTS = {
    "+": "expressions have no arithmetic", "-": "expressions have no arithmetic",
    "*": "expressions have no arithmetic", "/": "expressions have no arithmetic",
    "%": "expressions have no arithmetic", "=": "use '==' to compare",
    "&": "use '&&'", "|": "use '||'", "{": "'{{' starts an interpolation only inside a template",
    "}": "'}}' closes an interpolation only inside a template",
}


_CLOSERS = {"(": "RPAR", "[": "RSQB"}


def _unclosed_brackets(text: str) -> list[int]:
    """Indexes of the '(' and '[' of ``text`` still open at its end, outermost
    first (string literals skipped); empty when every bracket is closed."""
    stack: list[int] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "'\"":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if c in "([":
            stack.append(i)
        elif c in ")]" and stack:
            stack.pop()
        i += 1
    return stack


def _syntax_error(exc: Exception, text: str) -> ExprError:
    from lark.exceptions import UnexpectedCharacters, UnexpectedToken

    n = len(text)
    if isinstance(exc, UnexpectedToken):
        tok = exc.token
        expected = set(exc.expected or ())
        if tok.type == "$END":
            open_at = _unclosed_brackets(text)
            if open_at and _CLOSERS[text[open_at[-1]]] in expected:
                opener = open_at[-1]
                closers = "".join(")" if text[i] == "(" else "]" for i in reversed(open_at))
                return ExprError(SYNTAX, f"this '{text[opener]}' is never closed: the expression ends before "
                                 f"its '{closers[0]}'", opener, opener + 1, replacement=closers, fix_span=(n, n))
            exp = _expected_text(expected)
            return ExprError(SYNTAX, "unexpected end of expression" + (f"; expected {exp}" if exp else ""), n, n)
        s = tok.start_pos if tok.start_pos is not None else 0
        e = tok.end_pos if tok.end_pos is not None else s + 1
        if tok.type in ("TRUE", "FALSE", "NULL", "IN") and expected == {"NAME"}:
            return ExprError(SYNTAX, f"'{tok}' is a keyword and cannot be a path segment", s, e)
        if tok.type in ("CMP", "IN") and "CMP" not in expected and "_AND" in expected:
            return ExprError(SYNTAX, f"comparisons do not chain: '{tok}' cannot follow a comparison; "
                             "combine comparisons with '&&' (a < b && b < c)", s, e)
        if tok.type == "LPAR" and "_DOT" in expected:
            return ExprError(SYNTAX, "only contains, startsWith, endsWith and length can be called, "
                             "on their own (not after a path)", s, e)
        desc = _TOKEN_DESC.get(tok.type)
        shown = f"{desc} '{tok}'" if desc else f"'{tok}'"
        exp = _expected_text(expected)
        return ExprError(SYNTAX, f"unexpected {shown}" + (f"; expected {exp}" if exp else ""), s, e)
    if isinstance(exc, UnexpectedCharacters):
        p = exc.pos_in_stream if exc.pos_in_stream is not None else 0
        ch = text[p] if p < n else ""
        if ch in ("'", '"'):
            return ExprError(SYNTAX, f"unterminated string: no closing {ch}", p, n)
        hint = _CHAR_HINTS.get(ch)
        if ch == "=" and text[p:p + 2] != "==":
            hint = "use '==' to compare"
        msg = f"unexpected character {ch!r}" + (f": {hint}" if hint else "")
        # a lone `=` between operands: the comparison `==` (a guess: the fix is unsafe)
        lone = ch == "=" and text[p - 1:p] not in ("=", "!", "<", ">") and text[p + 1:p + 2] not in ("=", "<", ">")
        return ExprError(SYNTAX, msg, p, min(n, p + 1), "==" if lone else None)
    return ExprError(SYNTAX, f"syntax error: {exc}", 0, n)


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------

def _byte_limit_index(text: str, limit: int) -> int | None:
    """Code-point index of the first character beyond ``limit`` UTF-8 bytes,
    or ``None`` if the text fits."""
    if len(text) * 4 <= limit:
        return None
    total = len(text.encode("utf-8"))
    if total <= limit:
        return None
    b = 0
    for i, c in enumerate(text):
        o = ord(c)
        b += 1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4
        if b > limit:
            return i
    return len(text)  # pragma: no cover


def _prescan_brackets(text: str) -> ExprError | None:
    """Linear scan for bracket nesting beyond the limit (strings skipped)."""
    depth = 0
    quote = ""
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c == "'" or c == '"':
            quote = c
        elif c == "(" or c == "[":
            depth += 1
            if depth > MAX_NESTING:
                return ExprError(TOO_DEEP, f"expression nesting is deeper than {MAX_NESTING} levels "
                                 f"(brackets nested {MAX_NESTING + 1} deep here)", i, i + 1)
        elif c == ")" or c == "]":
            depth -= 1
        i += 1
    return None


def parse_expression(text: str) -> tuple[A.Expr | None, list[ExprError]]:
    """Parse one expression (memoised; see :func:`_parse_expression`)."""
    if not isinstance(text, str):
        return None, [ExprError(SYNTAX, "an expression must be a string", 0, 0)]
    node, errs = _parse_expression_memo(text)
    return node, list(errs)


@functools.lru_cache(maxsize=8192)
def _parse_expression_memo(text: str) -> tuple[A.Expr | None, tuple[ExprError, ...]]:
    """Bounded memo of :func:`_parse_expression`: parsing is pure and the
    trees are frozen, so the language server, which re-checks a document on
    every edit, parses each unchanged expression once (lark LALR costs about
    0.1 ms per expression)."""
    node, errs = _parse_expression(text)
    return node, tuple(errs)


def _parse_expression(text: str) -> tuple[A.Expr | None, list[ExprError]]:
    """Parse one expression (docs/reference.md#expressions).

    Returns ``(ast, [])`` or ``(None, [error])``: LP3001 syntax (with the
    expected tokens), LP3002 over 8 KiB of UTF-8, LP3003 nesting over 64,
    LP3006 bad literal (unknown escape, unpaired surrogate, integer beyond
    ±(2^53−1), non-finite number).  Offsets are relative to ``text``.
    Never raises on bad input.
    """
    if not isinstance(text, str):
        return None, [ExprError(SYNTAX, "an expression must be a string", 0, 0)]
    over = _byte_limit_index(text, MAX_EXPR_BYTES)
    if over is not None:
        size = len(text.encode("utf-8"))
        return None, [ExprError(TOO_LONG, f"expression is {size:,} bytes; the limit is "
                                f"{MAX_EXPR_BYTES:,} bytes (8 KiB)", over, len(text))]
    deep = _prescan_brackets(text)
    if deep is not None:
        return None, [deep]
    if not text.strip():
        return None, [ExprError(SYNTAX, "empty expression", 0, len(text))]
    return _parse_unbounded(text)


# A bare dotted path (the usual ``{{ input.topic }}``), whitespace as the
# grammar ignores it: read without lark, so a plan whose expressions are all
# plain paths never imports it (start-up of ``loopc check``).  A name that is
# a keyword (``true``, ``in``...) goes to lark, which rejects it or reads a
# literal; the tree is the one the lark transformer builds for a path.
_WS = "[ \t\r\n]*"
_BARE_PATH = re.compile(f"{_WS}[A-Za-z_][A-Za-z0-9_]*(?:{_WS}\\.{_WS}[A-Za-z_][A-Za-z0-9_]*)*{_WS}")
_NAME = re.compile("[A-Za-z_][A-Za-z0-9_]*")
_KEYWORDS = frozenset(("true", "false", "null", "in"))


def _bare_path(text: str) -> A.Path | None:
    """The :class:`~loopc.compiler.expr.ast.Path` of ``text`` when it is
    nothing but a dotted path of non-keyword names, else ``None``."""
    if _BARE_PATH.fullmatch(text) is None:
        return None
    kids = list(_NAME.finditer(text))
    names = [k.group() for k in kids]
    if not _KEYWORDS.isdisjoint(names):
        return None
    if len(names) >= 2 and names[0] == "run" and names[1] in ("input", "state"):
        root, segs = "run." + names[1], tuple(names[2:])
    else:
        root, segs = names[0], tuple(names[1:])
    return A.Path(root=root, segments=segs, start=kids[0].start(), end=kids[-1].end(),
                  name_starts=tuple(k.start() for k in kids))


def _parse_unbounded(text: str) -> tuple[A.Expr | None, list[ExprError]]:
    """Run lark on ``text`` without the byte budget (tests and benchmarks
    use it to parse very long chains); tree depth is still bounded.  A bare
    dotted path is read directly (:func:`_bare_path`)."""
    path = _bare_path(text)
    if path is not None:
        return path, []
    try:
        node, _depth = _parser().parse(text)
    except _Fail as f:
        return None, [f.error]
    except RecursionError:  # pragma: no cover - defensive; parsing is iterative
        return None, [ExprError(TOO_DEEP, "expression nesting is too deep", 0, len(text))]
    except Exception as exc:  # lark UnexpectedInput and friends
        return None, [_syntax_error(exc, text)]
    return node, []


def parse_path(text: str) -> tuple[A.Path | None, list[ExprError]]:
    """Parse the dotted path of ``{ref: <path>}`` (docs/reference.md#values): exactly a path,
    nothing else (``input.a.b``, ``run.state.x``, ``items``; no spaces around
    the dots, no parentheses; surrounding whitespace is ignored).  Errors as for
    :func:`parse_expression`; anything that parses but is not a bare path is
    LP3001 "a ref holds a path only"."""
    node, errs = parse_expression(text)
    if errs:
        return None, errs
    if not isinstance(node, A.Path) or text.strip() != node.text:
        assert node is not None
        return None, [ExprError(SYNTAX, "a ref holds a dotted path only (e.g. input.topic); "
                                "use {expr: ...} for an expression", node.start, node.end)]
    return node, []


def _find_close(text: str, i: int) -> tuple[int, int]:
    """For an interpolation whose expression starts at ``i``: the index of
    the ``}}`` that closes it and of the first ``{{`` before that (quotes
    respected, one pass), each -1 when there is none."""
    n = len(text)
    quote = ""
    reopened = -1
    while i < n:
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c == "'" or c == '"':
            quote = c
        elif c == "}" and i + 1 < n and text[i + 1] == "}":
            return i, reopened
        elif c == "{" and reopened < 0 and i + 1 < n and text[i + 1] == "{":
            reopened = i
        i += 1
    return -1, reopened


def parse_template(text: str) -> tuple[A.TemplateAst | None, list[ExprError]]:
    """Split and parse a template (memoised; see :func:`_parse_template`)."""
    if not isinstance(text, str):
        return _parse_template(text)
    tpl, errs = _parse_template_memo(text)
    return tpl, list(errs)


@functools.lru_cache(maxsize=4096)
def _parse_template_memo(text: str) -> tuple[A.TemplateAst | None, tuple[ExprError, ...]]:
    tpl, errs = _parse_template(text)
    return tpl, tuple(errs)


def _parse_template(text: str) -> tuple[A.TemplateAst | None, list[ExprError]]:
    """Parse a template: literal text with ``{{ expression }}`` segments
    (docs/reference.md#templates).  A literal ``{{`` is written ``{{ '{{' }}``; a ``}}``
    outside an interpolation is literal text.  Quotes inside an
    interpolation are respected when looking for its ``}}``.

    Returns ``(TemplateAst, [])`` or ``(None, errors)`` — LP3004 over 64 KiB,
    LP3005 an unclosed ``{{``, and every embedded expression's errors
    (offsets relative to ``text``).  Never raises on bad input.
    """
    if not isinstance(text, str):
        return None, [ExprError(TEMPLATE_SYNTAX, "a template must be a string", 0, 0)]
    over = _byte_limit_index(text, MAX_TEMPLATE_BYTES)
    if over is not None:
        size = len(text.encode("utf-8"))
        return None, [ExprError(TEMPLATE_TOO_LONG, f"template is {size:,} bytes; the limit is "
                                f"{MAX_TEMPLATE_BYTES:,} bytes (64 KiB)", over, len(text))]
    parts: list[str | A.Interp] = []
    errors: list[ExprError] = []
    i = 0
    n = len(text)
    while i < n:
        j = text.find("{{", i)
        if j < 0:
            parts.append(text[i:])
            break
        if j > i:
            parts.append(text[i:j])
        k, reopened = _find_close(text, j + 2)
        if k < 0:
            errors.append(ExprError(TEMPLATE_SYNTAX, "'{{' is not closed by '}}' (write a literal "
                                    "'{{' as {{ '{{' }})", j, j + 2))
            break
        inner = text[j + 2:k]
        if reopened >= 0:
            # '{{ a ({{ b }})': the first interpolation is never closed; the
            # second is parsed on its own (one defect, one diagnostic).
            errors.append(ExprError(TEMPLATE_SYNTAX, "this '{{' is not closed: another '{{' "
                                    "starts before its '}}' (close it with '}}', or write a "
                                    "literal '{{' as {{ '{{' }})", j, j + 2))
            i = reopened
            continue
        if not inner.strip():
            errors.append(ExprError(TEMPLATE_SYNTAX, "empty interpolation '{{ }}': put an expression "
                                    "inside, or write a literal '{{' as {{ '{{' }}", j, k + 2))
        else:
            node, errs = parse_expression(inner)
            if errs:
                if "{{" in inner:
                    hint = " (a literal '{{' is written {{ '{{' }})"
                    errs = [e.evolve(message=e.message + hint) for e in errs]
                errors.extend(e.shifted(j + 2) for e in errs)
            elif node is not None:
                parts.append(A.Interp(expr=A.shift(node, j + 2), start=j, end=k + 2))
        i = k + 2
    if errors:
        return None, errors
    return A.TemplateAst(parts=tuple(parts), text=text), []
