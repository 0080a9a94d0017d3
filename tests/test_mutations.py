"""Mutation fuzzing of the front end: valid plans, mutated at byte, text and
tree level, must always end in well-formed diagnostics.

Seeds are the valid plans in ``examples/*.yaml`` and the clean ``*_ok``
fixtures under ``tests/fixtures``.  For every mutant ``loopc.check_source``
must not raise, must not report LP5999 (internal error), every diagnostic
(and related location) must have a sane position inside the source, and
checking the same input twice must give the same diagnostics.

The hypothesis profile is fixed (``derandomize=True``) so the file is
reproducible and bounded in time.  The explicit regression tests at the end
are the minimal reproducers of defects this fuzzer found.
"""
from __future__ import annotations

import copy
import io
import random
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import loopc
from loopc.lineindex import LineIndex

from conftest import ROOT
from conftest import slots as json_slots
from conftest import HEADER as H


def _corpus() -> list[str]:
    files = sorted((ROOT / "examples").glob("*.yaml"))
    for f in sorted((ROOT / "tests" / "fixtures").rglob("*_ok.yaml")):
        out = f.with_suffix(".out")
        if out.exists() and not out.read_text(encoding="utf-8").strip():
            files.append(f)
    return [f.read_text(encoding="utf-8") for f in files]


CORPUS = _corpus()


def _vocabulary() -> dict[str, list[str]]:
    """Plain values seen under each key anywhere in the corpus (``type`` →
    every node and field type, ``port`` → every port name, ...): swapping a
    value for another one of the same key gives plans that still parse and
    reach the later passes, but are subtly wrong."""
    vocab: dict[str, set[str]] = {}
    for src in CORPUS:
        for k, v in re.findall(r"\b([A-Za-z]+): ([A-Za-z0-9_.#$-]+)", src):
            vocab.setdefault(k, set()).add(v)
    return {k: sorted(v) for k, v in sorted(vocab.items()) if len(v) > 1}


VOCAB = _vocabulary()
_TOKEN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*|[0-9]+|\{\{|\}\}|[{}\[\]:,|>'\"#&*!?-]")


# ---------------------------------------------------------------------------
# Invariants
# ---------------------------------------------------------------------------

def _line_count(src: str | bytes) -> int:
    """Lines as an editor (LSP) counts them: breaks are LF, CRLF and CR."""
    text = src.decode("utf-8", "replace") if isinstance(src, bytes) else src
    text = text.lstrip("\ufeff")
    return len(re.split(r"\r\n|\r|\n", text))


def _key(res: loopc.CheckResult) -> list[dict[str, Any]]:
    return [d.to_json() for d in res.diagnostics]


def check_invariants(src: str | bytes, *, twice: bool = True) -> loopc.CheckResult:
    """Run ``check_source`` (no diagnostic limit) on ``src`` and assert the
    front-end contract."""
    res = loopc.check_source(src, max_diagnostics=None)
    n = _line_count(src)
    index = LineIndex(res.document.text) if res.document is not None else None
    for d in res.diagnostics:
        assert d.code != "LP5999", d.message
        spans = [d.span] + [r.span for r in d.related]
        if d.fix is not None:
            spans += [e.span for e in d.fix.edits]
        for s in spans:
            if s is None:  # only findings about the whole source have no position
                assert d.code in ("LP1003", "LP1010", "LP1011"), d
                continue
            if index is not None:  # offsets agree with line/column
                assert s.start is not None and s.end is not None and s.start <= s.end, (d.code, s)
                assert index.offset(s.line - 1, s.column - 1) == s.start, (d.code, s)
            assert s.line >= 1 and s.column >= 1, (d.code, s)
            assert (s.end_line, s.end_column) >= (s.line, s.column), (d.code, s)
            assert s.line <= n + 1 and s.end_line <= n + 1, (d.code, s, n)
    if twice:
        again = loopc.check_source(src, max_diagnostics=None)
        assert _key(again) == _key(res), "check_source is not deterministic"
    return res


# ---------------------------------------------------------------------------
# Byte level
# ---------------------------------------------------------------------------

_SPECIAL_BYTES = [
    b"\x00", b"\t", b"\xef\xbb\xbf", b"\r", b"\r\n", b"\n", b"\xff", b"\xc3",
    b"\xed\xa0\x80", b"\xc2\x85", "\u2028".encode(), "\u2029".encode(),
    b"\xf0\x9f\x98\x80", b"\x0b", b"\x0c", b"\x1b", b"\x7f", b" ", b"\xc0\xaf",
]


def mutate_bytes(src: str, rnd: random.Random) -> bytes:
    data = bytearray(src.encode("utf-8"))
    for _ in range(rnd.randint(1, 4)):
        n = len(data)
        i = rnd.randint(0, n)
        op = rnd.randrange(6)
        if op == 0:
            del data[i:i + rnd.randint(1, 16)]
        elif op == 1:
            data[i:i] = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 6)))
        elif op == 2 and n:
            data[min(i, n - 1)] = rnd.randrange(256)
        elif op == 3:
            del data[i:]
        else:
            data[i:i] = rnd.choice(_SPECIAL_BYTES)
    return bytes(data)


# ---------------------------------------------------------------------------
# Text level
# ---------------------------------------------------------------------------

_SNIPPETS = [
    "{{", "}}", "{{ }}", "{{ input.x }}", "&a ", "*a", "!!str ", "---\n", "...\n",
    "? ", "- ", ": ", " #", '"', "'", "|", ">", "[", "]", "{", "}", ",",
    "&&", "||", "!", "\t", "%YAML 1.2\n", "!!binary ", "<<: ", "{literal: ", "\\",
]


def mutate_text(src: str, rnd: random.Random) -> str:
    tokens = _TOKEN_RE.findall(src) or ["x"]
    for _ in range(rnd.choice([1, 1, 1, 2, 4])):
        lines = src.split("\n")
        n = len(lines)
        op = rnd.randrange(11)
        i, j = rnd.randrange(n), rnd.randrange(n)
        if op == 0:
            lines[i], lines[j] = lines[j], lines[i]
        elif op == 1:
            lines.insert(i, lines[j])
        elif op == 2:
            del lines[i]
        elif op == 3:
            line = lines[i]
            stripped = line.lstrip(" ")
            indent = len(line) - len(stripped)
            indent = max(0, indent + rnd.choice([-4, -2, -1, 1, 2, 4]))
            lines[i] = rnd.choice([" ", " ", "\t"]) * indent + stripped
        elif op == 4:
            # replace one token occurrence with another token of the plan
            found = list(_TOKEN_RE.finditer(lines[i]))
            if found:
                m = rnd.choice(found)
                lines[i] = lines[i][:m.start()] + rnd.choice(tokens) + lines[i][m.end():]
        elif op == 5:
            k = rnd.randint(0, len(lines[i]))
            lines[i] = lines[i][:k] + rnd.choice(_SNIPPETS) + lines[i][k:]
        elif op == 6 or op == 9:
            # a token lifted into a key or a value elsewhere
            k = rnd.randint(0, len(lines[i]))
            lines[i] = lines[i][:k] + rnd.choice(tokens) + lines[i][k:]
        elif op == 7:
            del lines[i:i + rnd.randint(2, 10)]
        elif op == 8:
            # a value swapped for another value the corpus uses under that key
            found = [m for m in re.finditer(r"\b([A-Za-z]+): ([A-Za-z0-9_.#$-]+)", lines[i]) if m.group(1) in VOCAB]
            if found:
                m = rnd.choice(found)
                lines[i] = lines[i][:m.start(2)] + rnd.choice(VOCAB[m.group(1)]) + lines[i][m.end(2):]
        else:
            lines = lines[:i]
        src = "\n".join(lines)
    ending = rnd.randrange(8)
    if ending == 0:
        src = src.replace("\n", "\r\n")
    elif ending == 1:
        src = src.replace("\n", "\r")
    elif ending == 2:
        src = "\ufeff" + src
    return src


# ---------------------------------------------------------------------------
# Tree level
# ---------------------------------------------------------------------------

def _yaml(**kw: Any) -> Any:
    from ruamel.yaml import YAML

    y = YAML(typ="safe", pure=True)
    for k, v in kw.items():
        setattr(y, k, v)
    return y


_LOADER = None
_LOADED: dict[int, Any] = {}


def _load(i: int) -> Any:
    global _LOADER
    if i not in _LOADED:
        if _LOADER is None:
            _LOADER = _yaml()
        _LOADED[i] = _LOADER.load(CORPUS[i])
    return copy.deepcopy(_LOADED[i])


_REPLACEMENTS: list[Any] = [
    None, True, False, 0, -1, 2**53, 2**64, 1.5, 1e300, "", "x", "in", "end", "PT1S",
    "{{ input.a }}", "{{", "a}}b{{", "#room", "mem_x", [], {}, [1, "a"], {"a": 1},
    {"ref": "input.x"}, {"ref": ""}, {"ref": 3}, {"expr": "true && false"}, {"expr": "(("},
    {"literal": {"ref": "x"}}, {"type": "string"}, {"type": "array"}, {"type": "enum", "values": []},
    {"node": "x", "port": "completed"}, "ünïcödé", "n" * 300, "a\nb", {1: 2}, {True: None},
    {None: 1}, {"ref": "input.a", "expr": "true"},
]


def _ids(data: Any) -> list[str]:
    return [c[k] for c, k in json_slots(data)
            if isinstance(c, dict) and k in ("id", "node", "entry", "forkId", "fanOutId", "port")
            and isinstance(c[k], str)]


def _nest(value: Any, depth: int, rnd: random.Random) -> Any:
    for _ in range(depth):
        value = [value] if rnd.random() < 0.5 else {"k": value}
    return value


_EXPR_PIECES = [
    "input.", "output.", "run.state.", "run.input.", "item.", "loop.", "branches.", "winner.",
    "items", "&&", "||", "!", "==", "!=", "<", "<=", ">", ">=", " in ", "(", ")", "[", "]",
    ",", "'", '"', "\\", "\\u00e9", "\\uD800", "true", "false", "null", "0", "-1", "1e400",
    "99999999999999999999", "1.5", "contains(", "length(", "startsWith(", "endsWith(", "foo(",
    "{{", "}}", " ", ".", "é", "😀", "\u2028", "\x00", "\t", "\n",
]


def mutate_string(text: str, rnd: random.Random) -> str:
    """Character-level edits of an expression, template or reference."""
    for _ in range(rnd.randint(1, 3)):
        k = rnd.randint(0, len(text))
        op = rnd.randrange(3)
        if op == 0:
            text = text[:k] + rnd.choice(_EXPR_PIECES) + text[k:]
        elif op == 1:
            text = text[:k] + text[k + rnd.randint(1, 6):]
        else:
            text = text[:k] + rnd.choice(_EXPR_PIECES) + text[k + rnd.randint(1, 4):]
    return text


def _rewire(data: Any, rnd: random.Random) -> None:
    """Point an edge end at another node/port of the same plan (cycles,
    edges across scopes, into the wrong join, ...)."""
    edges = data.get("edges") if isinstance(data, dict) else None
    nodes = data.get("nodes") if isinstance(data, dict) else None
    if not isinstance(edges, list) or not isinstance(nodes, list):
        return
    ends = [e[k] for e in edges if isinstance(e, dict) for k in ("from", "to") if isinstance(e.get(k), dict)]
    ids = [n["id"] for n in nodes if isinstance(n, dict) and isinstance(n.get("id"), str)]
    ports = sorted({str(e.get("port")) for e in ends if e.get("port") is not None} | {"in", "continue", "break"})
    if not ends or not ids:
        return
    end = rnd.choice(ends)
    if rnd.random() < 0.7:
        end["node"] = rnd.choice(ids)
    if rnd.random() < 0.5:
        end["port"] = rnd.choice(ports)


def _graft(data: Any, rnd: random.Random) -> None:
    """Copy a node of another plan in, reached from a port of this plan."""
    other = _load(rnd.choice(_SMALL))
    if not (isinstance(data, dict) and isinstance(other, dict)):
        return
    theirs = [n for n in other.get("nodes") or [] if isinstance(n, dict)]
    mine = [n for n in data.get("nodes") or [] if isinstance(n, dict) and isinstance(n.get("id"), str)]
    if not theirs or not mine or not isinstance(data.get("nodes"), list):
        return
    node = rnd.choice(theirs)
    data["nodes"].append(node)
    if isinstance(data.get("edges"), list):
        ports = [e["from"].get("port") for e in data["edges"]
                 if isinstance(e, dict) and isinstance(e.get("from"), dict)] or ["completed"]
        data["edges"].append({"id": f"e_graft{rnd.randrange(1000)}",
                              "from": {"node": rnd.choice(mine)["id"], "port": rnd.choice(ports)},
                              "to": {"node": node.get("id")}})


def mutate_tree(data: Any, rnd: random.Random) -> Any:
    for _ in range(rnd.randint(1, 3)):
        r = rnd.random()
        if r < 0.1:
            _rewire(data, rnd)
            continue
        if r < 0.15:
            _graft(data, rnd)
            continue
        slots = json_slots(data)
        if not slots:
            return rnd.choice(_REPLACEMENTS)
        strings = [(c, k) for c, k in slots if isinstance(c[k], str)]
        if strings and rnd.random() < 0.3:
            # expressions, templates and references are the richest strings
            rich = [(c, k) for c, k in strings
                    if k in ("ref", "expr", "when", "condition") or "{{" in c[k]]
            c, k = rnd.choice(rich or strings)
            c[k] = mutate_string(c[k], rnd)
            continue
        vocab = [(c, k) for c, k in slots if isinstance(c, dict) and k in VOCAB]
        if vocab and rnd.random() < 0.35:
            c, k = rnd.choice(vocab)
            c[k] = rnd.choice(VOCAB[k])
            continue
        cont, key = rnd.choice(slots)
        op = rnd.randrange(10)
        if op == 0:  # delete a key / item
            del cont[key]
        elif op == 1:  # change a value's type
            cont[key] = copy.deepcopy(rnd.choice(_REPLACEMENTS))
        elif op == 2:  # swap node types
            v = cont[key]
            if isinstance(v, dict):
                cont[key] = list(v.values()) if rnd.random() < 0.5 else list(v.keys())
            elif isinstance(v, list):
                cont[key] = {f"k{i}": x for i, x in enumerate(v)}
            else:
                cont[key] = [v] if rnd.random() < 0.5 else {str(v): v}
        elif op == 3:  # rename ids
            ids = _ids(data)
            targets = [(c, k) for c, k in slots if isinstance(c, dict) and k in ("id", "node", "entry", "port")]
            if targets:
                c, k = rnd.choice(targets)
                c[k] = rnd.choice(ids + ["X", "", "9a", "a" * 70, "ñ", "in", "end"])
        elif op == 4 and isinstance(data, dict) and isinstance(data.get("edges"), list) and data["edges"]:
            del data["edges"][rnd.randrange(len(data["edges"]))]
        elif op == 5 and isinstance(data, dict) and isinstance(data.get("nodes"), list) and data["nodes"]:
            nodes = data["nodes"]
            nodes.insert(rnd.randrange(len(nodes) + 1), copy.deepcopy(rnd.choice(nodes)))
        elif op == 6:  # nest deeply
            cont[key] = _nest(cont[key], rnd.choice([2, 8, 31, 33, 63, 70]), rnd)
        elif op == 7:  # move a value elsewhere
            c2, k2 = rnd.choice(slots)
            cont[key] = copy.deepcopy(c2[k2])
        elif op == 8 and isinstance(cont, dict):  # rename a key
            keys = [k for c, k in slots if isinstance(c, dict)]
            new = rnd.choice(keys + [1, True, None, "Id", "next", "inputs", "trigger"])
            cont[new] = cont.pop(key)
        elif op == 9 and isinstance(data, dict) and isinstance(data.get("edges"), list) and data["edges"]:
            edges = data["edges"]
            edges.append(copy.deepcopy(rnd.choice(edges)))
    return data


def _dump(data: Any, flow: bool | None, rnd: random.Random, width: int) -> str:
    y = _yaml(
        default_flow_style=flow,
        width=width,
        allow_unicode=rnd.random() < 0.5,
        sort_base_mapping_type_on_output=rnd.random() < 0.2,
    )
    if rnd.random() < 0.1:
        y.default_style = rnd.choice(['"', "'"])
    if rnd.random() < 0.3:
        mapping, sequence, offset = rnd.choice([(2, 2, 0), (2, 4, 2), (4, 4, 2), (3, 5, 3), (4, 6, 4)])
        y.indent(mapping=mapping, sequence=sequence, offset=offset)
    buf = io.StringIO()
    y.dump(data, buf)
    return buf.getvalue()


def dump_random(data: Any, rnd: random.Random) -> str:
    """Dump ``data`` with ruamel in a random style.  Usually the top level is
    written key by key in block style so the header lines stay first (and
    the checker gets past pass 1); values use the random style."""
    flow = rnd.choice([None, False, True])
    if not isinstance(data, dict) or rnd.random() < 0.1:
        return _dump(data, flow, rnd, rnd.choice([20, 80, 4096]))
    parts = []
    for k, v in data.items():
        if k in ("apiVersion", "kind") and isinstance(v, str) and rnd.random() < 0.9:
            parts.append(f"{k}: {v}\n")
            continue
        part = "{" if flow else _dump({k: v}, flow, rnd, rnd.choice([20, 80, 4096]))
        if part.startswith("{"):
            part = _dump({k: v}, True, rnd, 1 << 30).strip()
            part = part[1:-1] if part.startswith("{") and part.endswith("}") else part
            part += "\n"
        parts.append(part)
    return "".join(parts)


# ---------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------

def _settings(n: int) -> settings:
    return settings(derandomize=True, deadline=None, database=None, max_examples=n,
                    suppress_health_check=list(HealthCheck))

_RND = st.randoms(use_true_random=False)
# the few very large fixtures are too slow to re-dump with pure-Python ruamel
_SMALL = [i for i, src in enumerate(CORPUS) if len(src) < 20_000]


def test_corpus_is_clean() -> None:
    assert len(CORPUS) >= 9
    for src in CORPUS[:9]:
        assert check_invariants(src, twice=False).ok


@pytest.mark.slow
@_settings(400)
@given(_RND)
def test_byte_mutations(rnd: random.Random) -> None:
    data = mutate_bytes(CORPUS[rnd.randrange(len(CORPUS))], rnd)
    # also through the text entry point (invalid UTF-8 becomes lone surrogates)
    check_invariants(data.decode("utf-8", "surrogateescape") if rnd.random() < 0.3 else data)


@_settings(400)
@given(_RND)
@pytest.mark.slow
def test_text_mutations(rnd: random.Random) -> None:
    check_invariants(mutate_text(CORPUS[rnd.randrange(len(CORPUS))], rnd))


@_settings(250)
@given(_RND)
@pytest.mark.slow
def test_tree_mutations(rnd: random.Random) -> None:
    src = dump_random(mutate_tree(_load(rnd.choice(_SMALL)), rnd), rnd)
    check_invariants(src)


# ---------------------------------------------------------------------------
# Regression tests: minimal reproducers of defects found by this fuzzer
# ---------------------------------------------------------------------------

P = (H + "input:\n  topic: {type: string, required: true}\noutput: {}\nentry: done\nnodes:\n"
     "  - {id: done, type: end, end: {status: succeeded}}\nedges: []\n")


def _diags(src: str | bytes) -> list[tuple[str, int, int]]:
    return [(d.code, d.span.line, d.span.column) for d in check_invariants(src, twice=False).diagnostics]


@pytest.mark.parametrize("brk", ["\u2028", "\u2029", "\x85"])
def test_yaml_only_line_breaks_do_not_shift_lines(brk: str) -> None:
    # libyaml breaks lines at NEL/LS/PS; editors (LSP) do not: positions
    # follow the editor, so a one-line source never reports line 2
    src = ("a" + brk + "piVersion: loop.pl").encode()
    assert _diags(src) == [("LP1001", 1, 12)]
    # a line separator inside a quoted string keeps later lines in place
    plan = P.replace("kind: PlanVersion\n", f"kind: PlanVersion\nx: \"a{brk}b\"\n", 1)
    assert ("LP2007", 3, 1) in _diags(plan)


def test_error_at_end_of_input_is_on_the_last_line() -> None:
    # no final newline: libyaml puts the end-of-input mark on a virtual line;
    # the diagnostic sits on the `[` that is never closed, the end of input
    # is its related location
    assert _diags(H + "x: [") == [("LP1001", 3, 4)]
    (d,) = check_invariants(H + "x: [", twice=False).diagnostics
    assert [(r.span.line, r.span.column) for r in d.related] == [(3, 5)]


@pytest.mark.parametrize("brk", ["\r", "\r\n", "\n"])
def test_invalid_utf8_position_counts_every_line_break(brk: str) -> None:
    src = (H + "en\xd1x: 1\n").replace("\n", brk).encode("utf-8", "surrogateescape")
    src = src.replace("\xd1".encode(), b"\xd1")
    assert _diags(src) == [("LP1002", 3, 3)]
    assert _diags(("ab" + brk + "\ud800").encode("utf-8", "surrogatepass")) == [("LP1002", 2, 1)]
    assert _diags("\ufeffab" + brk + "c\ud800") == [("LP1002", 2, 2)]


def test_huge_integer_literals_are_numbers_out_of_range() -> None:
    # Python refuses to convert integers over 4,300 digits: this used to be
    # reported as a bogus YAML syntax error at 1:1
    for lit in ["9" * 5000, "-" + "9" * 5000, "0x" + "f" * 5000, "0o" + "7" * 5000]:
        src = P.replace("topic: {type: string, required: true}", f"topic: {{type: number, default: {lit}}}")
        assert _diags(src) == [("LP2017", 4, 34)], lit
        loop = (H + "input: {}\noutput: {}\nentry: l\nnodes:\n  - id: l\n    type: loop\n"
                f"    loop: {{mode: counted, iterations: {lit}, state: {{}}, init: {{}}}}\nedges: []\n")
        assert _diags(loop) == [("LP2012", 9, 39)], lit


def test_huge_integer_in_expression() -> None:
    when = "9" * 5000 + " > 1"
    src = (H + "input: {}\noutput: {}\nentry: s\nnodes:\n  - id: s\n    type: switch\n"
           f"    switch: {{mode: first_match, cases: [{{port: a, when: '{when}'}}], default: b}}\n"
           "  - {id: done, type: end, end: {status: succeeded}}\nedges:\n"
           "  - {id: e1, from: {node: s, port: a}, to: {node: done}}\n"
           "  - {id: e2, from: {node: s, port: b}, to: {node: done}}\n")
    res = check_invariants(src, twice=False)
    assert [(d.code, d.span.line, d.span.column, d.span.end_column) for d in res.diagnostics] == [
        ("LP3006", 9, 58, 5058)]
    assert ("a number literal of 5,000 characters is over the limit of 64 characters"
            in res.diagnostics[0].message)


def test_deep_complex_key_is_a_nesting_error() -> None:
    # used to crash the composer ("pop from empty list" shown as LP1001 at 1:1)
    assert _diags(H + "? " + "[" * 100 + "]" * 100 + "\n: c\n") == [("LP1008", 3, 3), ("LP1011", 3, 66)]
    assert _diags(H + "? [[a]]\n: c\n") == [("LP2006", 1, 1), ("LP2006", 1, 1), ("LP1008", 3, 3)]


def test_core_tag_on_quoted_scalar_is_one_diagnostic() -> None:
    # `!!bool "true"`: the tag is rejected; the value it denotes is kept, so
    # no second "quoted booleans are strings" diagnostic
    src = P.replace("required: true", 'required: !!bool "true"')
    assert _diags(src) == [("LP1007", 4, 35)]


def test_rejected_state_default_is_not_also_missing() -> None:
    src = (H + "input: {}\noutput: {}\nstate:\n  s: {type: object, default: " + "{a: " * 40 + "1"
           + "}" * 40 + "}\nentry: done\nnodes:\n  - {id: done, type: end, end: {status: succeeded}}\nedges: []\n")
    assert [c for c, _, _ in _diags(src)] == ["LP2094"]


def test_plan_without_edges_key_checks_routing() -> None:
    # an absent `edges` key used to silence the routing checks: the plan
    # checked clean and then failed to compile (LP5010)
    src = (H + "input: {}\noutput: {}\nentry: ask\nnodes:\n  - id: ask\n    type: send_message\n"
           "    sendMessage: {target: '#release', text: hi, completion: sent}\n")
    codes = {c for c, _, _ in _diags(src)}
    assert "LP4005" in codes
    ok = H + "input: {}\noutput: {}\nentry: done\nnodes:\n  - {id: done, type: end, end: {status: succeeded}}\n"
    assert check_invariants(ok, twice=False).ok


@pytest.mark.timeout(60)
def test_many_bad_interpolations_are_linear() -> None:
    # every diagnostic re-mapped the whole 65 KB scalar: 5,000 errors took ~110 s
    # (the timeout above is the hang guard; speed is measured in benchmarks/)
    detail = '"' + "{{ input.y }}" * 5000 + '"'
    src = (H + "input: {}\noutput: {}\nentry: f\nnodes:\n  - id: f\n    type: end\n"
           "    input: {x: {type: string, required: true}}\n"
           f"    end: {{status: failed, code: bad, detail: {detail}}}\nedges: []\n")
    res = check_invariants(src, twice=False)
    bad = [d for d in res.diagnostics if d.code == "LP3204"]
    assert len(bad) == 5000
    assert (bad[1].span.line, bad[1].span.column) == (10, 69)


@pytest.mark.parametrize("typo", [
    ("apiVersion: loop", "apiVersoin: loop"),
    ("entry: done", "entyr: done"),
    ("type: end, end", "tpye: end, end"),
    ("end: {status", "ennd: {status"),
])
def test_misspelt_required_key_is_one_diagnostic(typo: tuple[str, str]) -> None:
    # "unknown key 'tpye'; did you mean 'type'?" — not also "missing 'type'"
    got = [c for c, _, _ in _diags(P.replace(*typo))]
    assert got == ["LP2007"]


def test_empty_entry_is_one_diagnostic() -> None:
    assert [c for c, _, _ in _diags(P.replace("entry: done", "entry: ''"))] == ["LP2012"]
