"""The compiled composer (loopc.compiler._ycompose) against the Python one.

Both composers must build the same tree, slot for slot (positions, values and
their types, styles, keys, key records, parent links), and the compiled one
must hand back (``None``) every input on which the Python composer reports
anything, so diagnostics never depend on which one ran
(docs/architecture.md#the-yaml-layer).  Inputs: the examples, every YAML file
under tests/, the yaml-test-suite, generated plans, and cut and edited
variants of them (parse errors, duplicate keys, anchors, tags, BOMs, CRLF,
a missing final newline, non-ASCII text).

Where the extension is not built the comparison is skipped, except under CI
(``CI=true``), where a missing build fails: CI checks both composers.
"""
from __future__ import annotations

import math
import os
import random
import sys
from pathlib import Path
from typing import Any

import pytest

from loopc.compiler import yamlload
from loopc.compiler.report import Reporter
from loopc.compiler.yamlnodes import YMap, YScalar, YSeq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

FAST = yamlload.compiled_composer()
if FAST is None and os.environ.get("CI") == "true" and os.environ.get("LOOPC_YAML_COMPOSER") != "python":
    raise RuntimeError("CI: the compiled YAML composer (loopc.compiler._ycompose) was not built")
pytestmark = pytest.mark.skipif(FAST is None, reason="the compiled YAML composer is not built")


def _val(v: Any) -> Any:
    if isinstance(v, float) and math.isnan(v):
        return ("float", "nan")
    return (type(v).__name__, v)


def dump(root: Any) -> Any:
    """Every slot of every node of the tree, the parent links resolved to
    the collections' walk order."""
    order: dict[int, int] = {}
    out: list[Any] = []
    links = root._links_root if isinstance(root, (YMap, YSeq)) else None

    def walk(n: Any) -> Any:
        base = (type(n).__name__, n.line, n.col, n.end_line, n.end_col, n.start, n.end, n.key, n._pidx,
                None if n._links is None else (n._links() is links))
        if isinstance(n, YScalar):
            return (*base, _val(n.value), n.style, n.raw, n.is_key)
        order[id(n)] = len(order)
        if isinstance(n, YMap):
            kv = [k if k.__class__ is tuple else walk(k) for k in n.kv[0::2]]
            vs = [walk(v) for v in n.kv[1::2]]
            return (*base, n.flow, n._idx, n._links_root is links, dict(n.index),
                    [(tuple(_val(x) if i == 1 else x for i, x in enumerate(k)) if k.__class__ is tuple else k, v)
                     for k, v in zip(kv, vs)])
        return (*base, n.flow, n._links_root is links, [walk(v) for v in n.items])

    out.append(walk(root))
    if links is not None:
        out.append([None if c is None else order.get(id(c)) for c in links.colls])
        out.append(links.root() is root)
    return out


def _texts(plans: range, corpus: bool = True) -> list[tuple[str, str]]:
    import check_tree
    import generate

    out: list[tuple[str, str]] = []
    for p in [] if not corpus else sorted((ROOT / "examples").rglob("*.yaml")) + sorted((ROOT / "tests").rglob("*.yaml")):
        out.append((str(p.relative_to(ROOT)), p.read_bytes().decode("utf-8", "replace")))
    suite = ROOT.parent / "shared" / "yaml-test-suite"
    if not suite.is_dir():
        suite = ROOT.parent.parent / "shared" / "yaml-test-suite"
    if corpus and suite.is_dir():
        for p in sorted(suite.rglob("in.yaml")):
            out.append((str(p.relative_to(suite)), p.read_bytes().decode("utf-8", "replace")))
    for i in plans:
        out.append((f"tree plan {i}", check_tree.varied_plan(i)))
    out.append(("typical", generate.typical_plan()))
    # a key whose text is the Python composer's complex-key stand-in
    out.append(("nul key", 'apiVersion: loop.plan/v1\nkind: PlanVersion\n"\\0<complex>": 1\na: {"\\0x": [1]}\n'))
    return out


def _variants(name: str, text: str, r: random.Random) -> list[tuple[str, str]]:
    lines = text.splitlines(keepends=True)
    out = [(name, text), (name + " crlf", text.replace("\n", "\r\n")), (name + " no final newline", text.rstrip("\n")),
           (name + " bom", "\ufeff" + text)]
    if len(text) > 20:
        for _ in range(3):
            cut = r.randrange(len(text))
            out.append((f"{name} cut {cut}", text[:cut]))
    if len(lines) > 3:
        i = r.randrange(1, len(lines))
        out.append((f"{name} dup line {i}", "".join(lines[:i] + [lines[i - 1]] + lines[i:])))
        out.append((f"{name} indent {i}", "".join(lines[:i] + [" " + lines[i]] + lines[i + 1:])))
        out.append((f"{name} anchor {i}", "".join(lines[:i] + [lines[i].replace(": ", ": &a ", 1)] + lines[i + 1:])))
        out.append((f"{name} tag {i}", "".join(lines[:i] + [lines[i].replace(": ", ": !!str ", 1)] + lines[i + 1:])))
        out.append((f"{name} nbsp {i}", "".join(lines[:i] + ["\u00a0" + lines[i]] + lines[i + 1:])))
        out.append((f"{name} cjk {i}", "".join(lines[:i] + [lines[i].rstrip("\n") + " # 漢字😀\n"] + lines[i + 1:])))
    return out


def _cases(plans: range = range(0, 40, 20), vary_up_to: int = 6000, corpus: bool = True) -> list[tuple[str, str]]:
    """The inputs, with variants of those up to ``vary_up_to`` characters."""
    r = random.Random(26)
    out = []
    for name, text in _texts(plans, corpus):
        out += _variants(name, text, r) if len(text) <= vary_up_to else [(name, text)]
    return out


def _compare(cases: list[tuple[str, str]]) -> tuple[int, int]:
    assert FAST is not None
    same = handed_back = 0
    for name, src in cases:
        text = yamlload.decode_source(src, Reporter())
        if text is None:
            continue
        fast = FAST(text, *yamlload._end_position(text))
        if fast is None:
            handed_back += 1
            continue
        r = Reporter()
        py = yamlload._compose_events(text, r, None)
        assert not r.diagnostics, f"{name}: the compiled composer accepted what the Python one reports"
        assert py is not None
        assert dump(fast) == dump(py), name
        same += 1
    return same, handed_back


@pytest.mark.slow
def test_compiled_composer_builds_the_python_tree() -> None:
    same, handed_back = _compare(_cases())
    assert same > 300 and handed_back > 100, (same, handed_back)


@pytest.mark.slow
def test_compiled_composer_on_many_plans() -> None:
    same, handed_back = _compare(_cases(range(1, 200, 5), vary_up_to=10**9, corpus=False))
    assert same > 40 and handed_back > 100, (same, handed_back)


def test_load_is_the_same_with_either_composer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whole loads (diagnostics included) agree with the compiled composer on and off."""
    for name, src in _cases()[::29]:
        r1, r2 = Reporter(), Reporter()
        d1 = yamlload.load(src, r1)
        monkeypatch.setattr(yamlload, "_FAST", False)
        d2 = yamlload.load(src, r2)
        monkeypatch.undo()
        assert [d.to_json() if hasattr(d, "to_json") else repr(d) for d in r1.diagnostics] == \
            [d.to_json() if hasattr(d, "to_json") else repr(d) for d in r2.diagnostics], name
        assert (d1 is None) == (d2 is None), name
        if d1 is not None and d1.root is not None:
            assert d2 is not None and d2.root is not None
            assert dump(d1.root) == dump(d2.root), name


def test_python_composer_can_be_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yamlload, "_FAST", None)
    monkeypatch.setenv("LOOPC_YAML_COMPOSER", "python")
    assert yamlload.compiled_composer() is None
    monkeypatch.setattr(yamlload, "_FAST", None)
    monkeypatch.delenv("LOOPC_YAML_COMPOSER")
    assert yamlload.compiled_composer() is not None


def test_a_failing_compiled_composer_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """An exception inside the compiled composer (say MemoryError) never
    reaches the caller: the Python composer composes the text."""
    src = (ROOT / "examples" / "set_variable_timer.yaml").read_text(encoding="utf-8")
    r1 = Reporter()
    want = dump(yamlload.load(src, r1).root)

    def boom(text: str, line: int, col: int) -> None:
        raise MemoryError

    monkeypatch.setattr(yamlload, "_FAST", boom)
    r2 = Reporter()
    doc = yamlload.load(src, r2)
    assert doc is not None and dump(doc.root) == want
    assert r1.diagnostics == r2.diagnostics


def test_a_second_copy_of_the_loader_composes_in_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """The extension's node classes are process-wide: a loader whose classes
    are others (a module imported afresh) gets no compiled composer, and the
    first one keeps its own."""
    assert FAST is not None

    class OtherScalar(YScalar):
        __slots__ = ()

    monkeypatch.setattr(yamlload, "_FAST", None)
    monkeypatch.setattr(yamlload, "YScalar", OtherScalar)
    assert yamlload.compiled_composer() is None
    monkeypatch.undo()
    monkeypatch.setattr(yamlload, "_FAST", None)
    assert yamlload.compiled_composer() is not None
    doc = yamlload.load((ROOT / "examples" / "set_variable_timer.yaml").read_text(encoding="utf-8"), Reporter())
    assert doc is not None and type(doc.root) is YMap


def _copies(root: Any, copy: Any, dl: int, delta: int) -> Any:
    """A new tree whose root entries are ``copy``'s copies of ``root``'s
    values (what the incremental splice builds), and its links table."""
    import weakref

    from loopc.compiler.yamlnodes import YLinks

    new_root = YMap(root.line, root.col, root.start, root.flow)
    links = YLinks(new_root)
    new_root._links_root = links
    new_root.index = dict(root.index)
    lref = weakref.ref(links)
    for k, v in zip(root.kv[0::2], root.kv[1::2]):
        new_root.kv.append(k)
        new_root.kv.append(copy(v, 0, lref, links.colls, dl, delta))
    return new_root


def test_compiled_copy_builds_the_python_copy() -> None:
    """The incremental re-check's subtree copy (``_ycompose.copy``) builds
    what its Python twin (``incremental._copy``) builds, slot for slot,
    positions moved both ways, key nodes turned back into key records."""
    from loopc.compiler import _ycompose
    from loopc.pipeline import incremental

    r = random.Random(7)
    seen = 0
    for name, src in _cases(range(0, 40, 20), vary_up_to=0):
        doc = yamlload.load(src, Reporter())
        if doc is None or not isinstance(doc.root, YMap) or doc.root.flow:
            continue
        root = doc.root
        if name == "typical":  # a key made a node (as key lookups leave some: YMap._key)
            m = next(v for v in root.values() if isinstance(v, YMap) and v.kv)
            m._key(0)
        for dl, delta in ((0, 0), (r.randint(1, 40), r.randint(1, 900)), (-1, -r.randint(1, 5))):
            a = _copies(root, incremental._copy, dl, delta)
            b = _copies(root, _ycompose.copy, dl, delta)
            assert dump(a) == dump(b), (name, dl, delta)
        seen += 1
    assert seen > 100, seen


def test_compiled_copy_refuses_what_is_not_a_tree() -> None:
    """Bad arguments are a TypeError, never a crash."""
    import weakref

    from loopc.compiler import _ycompose
    from loopc.compiler.yamlnodes import YLinks

    links = YLinks(YMap(0, 0, 0, False))
    lref = weakref.ref(links)
    with pytest.raises(TypeError):
        _ycompose.copy(object(), 0, lref, links.colls, 0, 0)
    with pytest.raises(TypeError):
        _ycompose.copy(YMap(0, 0, 0, False), "0", lref, links.colls, 0, 0)
    bad = YMap(0, 0, 0, False)
    bad.kv.extend([("short",), YScalar(0, 3, 3, "v", "", "v")])
    with pytest.raises(TypeError):
        _ycompose.copy(bad, 0, lref, links.colls, 1, 1)
    half = object.__new__(YScalar)  # no slots set
    with pytest.raises(TypeError):
        _ycompose.copy(half, 0, lref, links.colls, 0, 0)
