"""The incremental re-check (docs/architecture.md#incremental-re-check) gives
exactly what a whole check gives: every diagnostic field (ranges, related
locations, fixes), the result's flags, the YAML tree node for node and the
IR semantic digest, after random edit sequences on the examples and
goldens — edits inside one item, across items, in other sections, at line
and item boundaries, edits that break the YAML and edits that mend it.
Not timed (benchmarks/incremental.py measures it)."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import loopc
from loopc.compiler.yamlnodes import YMap, YNode, YScalar, YSeq
from loopc.pipeline import compile_checked
from loopc.pipeline.incremental import IncrementalChecker

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(ROOT.glob("examples/*.yaml")) + sorted(ROOT.glob("golden/**/source.yaml"))
TEXTS = [p.read_text(encoding="utf-8") for p in SOURCES]
PROFILE = dict(
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# what an edit inserts: structure, quoting, comments, YAML's refused
# features, indentation, line breaks
PIECES = [
    " ",
    "  ",
    "\n",
    "-",
    "- ",
    ":",
    ": ",
    "x",
    "id",
    "1",
    "{",
    "}",
    "[",
    "]",
    '"',
    "'",
    "#",
    "# c",
    "\t",
    "&a ",
    "*a",
    "!!str ",
    "{{ input.x }}",
    "  - ",
    "\n  - id: extra\n    type: end\n",
    "\n    ",
    "é",
    "\ufeff",
    "\r\n",
    "---\n",
    "key: v\n",
    "nodes",
    "edges",
]


def _positions(text: str) -> list[int]:
    """Interesting places: line starts and ends, dashes, after '- ' and ': '."""
    out = [0, len(text)]
    for i, c in enumerate(text):
        if c == "\n":
            out += [i, i + 1]
        elif c == "-" and text[i + 1 : i + 2] == " ":
            out += [i, i + 1, i + 2]
        elif c == ":":
            out += [i, i + 1]
    return out


def edit(text: str, rng: random.Random) -> str:
    """One random edit of ``text``."""
    if not text:
        return rng.choice(PIECES)
    if rng.random() < 0.45:  # typing: a letter or digit added to, or taken from, a word
        spots = [i for i in range(1, len(text)) if text[i].isalnum() and text[i - 1].isalnum()]
        if spots:
            at = rng.choice(spots)
            if rng.random() < 0.5:
                return text[:at] + rng.choice("aqz7_") + text[at:]
            return text[:at] + text[at + 1 :]
    at = rng.choice(_positions(text)) if rng.random() < 0.4 else rng.randrange(len(text) + 1)
    op = rng.randrange(7)
    lines = text.split("\n")
    if op == 0:  # insert a piece
        return text[:at] + rng.choice(PIECES) + text[at:]
    if op == 1:  # delete a few characters
        return text[:at] + text[at + rng.randint(1, 4) :]
    if op == 2:  # replace one character
        return text[:at] + rng.choice("xa1 :-#\n{") + text[at + 1 :]
    if op == 3:  # delete a line (or a few)
        k = rng.randrange(len(lines))
        del lines[k : k + rng.randint(1, 3)]
        return "\n".join(lines)
    if op == 4:  # duplicate or move a line
        k, m = rng.randrange(len(lines)), rng.randrange(len(lines))
        line = lines[k]
        if rng.random() < 0.5:
            del lines[k]
        lines.insert(min(m, len(lines)), line)
        return "\n".join(lines)
    if op == 5:  # change a line's indentation
        k = rng.randrange(len(lines))
        lines[k] = (" " * rng.choice([0, 1, 2, 4, 6])) + lines[k].lstrip(" ")
        return "\n".join(lines)
    # a span of text deleted across lines (across items)
    end = min(len(text), at + rng.randint(1, 300))
    return text[:at] + text[end:]


def _tree(node: YNode | None) -> Any:
    """Everything observable of a YAML tree, as plain data."""
    if node is None:
        return None
    base = (
        type(node).__name__,
        node.line,
        node.col,
        node.start,
        node.end_line,
        node.end_col,
        node.end,
        node.key,
        node.pointer,
        (node.parent.pointer if node.parent is not None else None),
    )
    if isinstance(node, YScalar):
        v = node.value
        return base + ("nan" if isinstance(v, float) and math.isnan(v) else repr(v), node.style, node.raw, node.is_key)
    if isinstance(node, YMap):
        keys = [_tree(k) for k, _ in node.items]
        return base + (node.flow, dict(node.index), keys, [_tree(v) for v in node.values()])
    assert isinstance(node, YSeq)
    return base + (node.flow, [_tree(v) for v in node.items])


def assert_same(inc: Any, full: Any, text: str) -> None:
    assert inc.diagnostics == full.diagnostics, (text, inc.diagnostics, full.diagnostics)
    for f in ("ok", "suppressed", "totals", "budget_checked", "path"):
        assert getattr(inc, f) == getattr(full, f), f
    for f in ("plan", "scopes", "types", "analysis"):
        assert (getattr(inc, f) is None) == (getattr(full, f) is None), f
    if full.document is not None:
        assert inc.document.text == full.document.text
        assert _tree(inc.document.root) == _tree(full.document.root)
    if full.ok:
        a, b = compile_checked(inc), compile_checked(full)
        assert a.digest == b.digest
        assert a.bytes == b.bytes
        assert a.diagnostics == b.diagnostics


def _run(rng: random.Random, text: str, steps: int, modes: dict[str, int]) -> None:
    checker = IncrementalChecker()
    history = [text]
    for _ in range(steps):
        r = rng.random()
        if r < 0.15 and len(history) > 1:  # undo: back to the text before
            history.pop()
            text = history[-1]
        else:
            text = edit(text, rng)
            history.append(text)
        inc = checker.check(text, path="plan.yaml")
        modes[checker.last_mode] = modes.get(checker.last_mode, 0) + 1
        full = loopc.check_source(text, path="plan.yaml")
        assert_same(inc, full, text)


MODES: dict[str, int] = {}


@pytest.mark.slow
@settings(max_examples=250, **PROFILE)
@given(st.integers(0, len(TEXTS) - 1), st.randoms(use_true_random=False))
def test_random_edit_sequences_equal_a_whole_check(which: int, rng: random.Random) -> None:
    _run(rng, TEXTS[which], 8, MODES)


def test_random_edits_quick() -> None:
    """A fixed sample of the property above (fast tier): every source, a
    few edits each; the incremental path is taken for most of them."""
    modes: dict[str, int] = {}
    for k, text in enumerate(TEXTS[::4]):
        _run(random.Random(k), text, 3, modes)
    assert modes.get("incremental", 0) > 0, modes


def test_random_edits_with_the_python_composer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same without the compiled composer: the splice copies the
    unchanged items with its Python copy (``incremental._copy``), which
    builds what the compiled one (``_ycompose.copy``) does."""
    from loopc.compiler import yamlload
    from loopc.pipeline import incremental

    monkeypatch.setattr(yamlload, "_FAST", False)
    assert incremental._copier() is incremental._copy
    modes: dict[str, int] = {}
    for k, text in enumerate(TEXTS[1::6]):
        _run(random.Random(100 + k), text, 3, modes)
    assert modes.get("incremental", 0) > 0, modes


def _inside_items(text: str, rng: random.Random) -> str:
    """A character typed into, or deleted from, a word of a node or edge item."""
    root = loopc.check_source(text).document.root
    items = [it for name in ("nodes", "edges") if isinstance(root.get(name), YSeq) for it in root.get(name).items]
    spots = [j for it in items for j in range(it.start + 1, it.end - 1) if text[j].isalpha() and text[j - 1].isalpha()]
    at = rng.choice(spots)
    return text[:at] + "q" + text[at:] if rng.random() < 0.5 else text[:at] + text[at + 1 :]


@pytest.mark.parametrize("steps", [1, pytest.param(3, marks=pytest.mark.slow)])
def test_edits_inside_items_are_incremental(steps: int) -> None:
    """A one-character edit in a word of an item re-reads that item alone,
    on every example and golden, and still equals the whole check."""
    rng = random.Random(7)
    for path, text in zip(SOURCES, TEXTS):
        checker = IncrementalChecker()
        checker.check(text)
        assert checker.last_mode == "full"
        for _ in range(steps):
            new = _inside_items(text, rng)
            inc = checker.check(new)
            assert checker.last_mode == "incremental", (path, checker.last_reason)
            assert_same(inc, loopc.check_source(new), new)
            text = new


def test_broken_and_mended() -> None:
    """A text the YAML layer rejects is checked whole and keeps the last
    clean tree; the edit that mends it is incremental again."""
    for text in TEXTS[:10]:
        checker = IncrementalChecker()
        checker.check(text)
        at = text.index("id: ", text.index("\nnodes:")) + 4
        broken = text[:at] + '"' + text[at:]
        assert_same(checker.check(broken), loopc.check_source(broken), broken)
        assert checker.last_mode == "full"
        for new in (text, text[:at] + "q" + text[at:]):
            assert_same(checker.check(new), loopc.check_source(new), new)
            assert checker.last_mode == "incremental", checker.last_reason


@pytest.mark.parametrize("piece", ["\ufeff", "\r\n", "&a ", "*a"])
def test_what_is_not_local_is_checked_whole(piece: str) -> None:
    text = TEXTS[0]
    checker = IncrementalChecker()
    checker.check(text)
    at = text.index("id: ", text.index("\nnodes:")) + 4  # a value's start
    new = text[:at] + piece + text[at:]
    inc = checker.check(new)
    assert checker.last_mode == "full", checker.last_reason
    assert_same(inc, loopc.check_source(new), new)


def test_switch_off_checks_whole() -> None:
    text = TEXTS[0]
    checker = IncrementalChecker(enabled=False)
    checker.check(text)
    at = text.index("\nnodes:") + 20
    checker.check(text[:at] + "q" + text[at:])
    assert checker.last_mode == "full"


def test_no_reference_cycles() -> None:
    """The spliced tree is acyclic like a loaded one: dropping the checker
    and its results leaves nothing for the cycle collector."""
    import gc

    text = TEXTS[0]
    at = text.index("\nnodes:") + 20

    def run() -> None:
        checker = IncrementalChecker()
        checker.check(text)
        res = checker.check(text[:at] + "q" + text[at:])
        assert checker.last_mode == "incremental"
        assert res.symbols is not None and res.source_map is not None

    run()
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        gc.set_debug(gc.DEBUG_SAVEALL)
        run()
        n = gc.collect()
        names = sorted({type(o).__name__ for o in gc.garbage})
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was:
            gc.enable()
    assert n == 0, names


def test_language_server_re_checks_incrementally() -> None:
    """analyse with the document's checker answers the whole check's
    protocol diagnostics; the ``incremental`` setting switches it off."""
    from loopc.lsp.analysis import analyse
    from loopc.lsp.server import LoopcServer
    from loopc.lsp.settings import parse_settings

    uri = "file:///x/plan.yaml"
    text = TEXTS[0]
    server = LoopcServer()
    checker = server.checker(uri)
    assert checker is server.checker(uri)
    analyse(uri, text, 1, "utf-16", project=False, checker=checker)
    at = text.index("type: ", text.index("\nnodes:")) + 6
    for version, new in enumerate([text[:at] + "x" + text[at:], text[:at] + "xq" + text[at:]], 2):
        a = analyse(uri, new, version, "utf-16", project=False, checker=checker)
        assert checker.last_mode == "incremental", checker.last_reason
        b = analyse(uri, new, version, "utf-16", project=False)
        assert a.diagnostics and a.diagnostics == b.diagnostics
    server.settings = parse_settings({"incremental": False})
    assert server.checker(uri) is None
    assert parse_settings({"incremental": "no"}).incremental is True
