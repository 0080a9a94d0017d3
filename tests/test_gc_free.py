"""No reference cycles (issue 8): a discarded check or compile result is
freed by reference counting alone, so a long-running host's cyclic garbage
collector has nothing to find; and the library never changes the
interpreter's GC state (docs/architecture.md "Invariants").

Not timed: the assertions count objects (``gc.collect()`` returns the
number of unreachable objects it found)."""
from __future__ import annotations

import gc
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

import loopc
from loopc.ir import decode
from loopc.pipeline import compile_checked

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
# failing plans walk the diagnostic paths (suggestions, scalar positions,
# fixes, suppressions): one fixture per family
FAILING = [sorted(d.glob("*.yaml"))[0] for d in sorted((ROOT / "tests" / "fixtures").iterdir())
           if d.is_dir() and any(d.glob("*.yaml"))]


class _Collector:
    """Automatic collection off while one call runs, so the explicit
    ``gc.collect()`` afterwards sees everything the call left behind."""

    def __enter__(self) -> None:
        self.was = gc.isenabled()
        gc.collect()
        gc.disable()

    def __exit__(self, *exc: Any) -> None:
        if self.was:
            gc.enable()


def _cyclic_garbage(fn: Callable[[], Any]) -> list[str]:
    """Type names of the objects only the cycle collector frees after one
    call of ``fn`` whose result is dropped (after two warm-up calls: lazy
    imports and caches are not garbage)."""
    fn()
    fn()
    with _Collector():
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            fn()
            n = gc.collect()
            names = sorted({type(o).__name__ for o in gc.garbage})
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            gc.collect()
    return names if n else []


def _sources() -> Iterator[Any]:
    for p in EXAMPLES:
        yield pytest.param(p, id=f"examples/{p.name}")
    for p in FAILING:
        yield pytest.param(p, id=str(p.relative_to(ROOT)))


@pytest.mark.parametrize("path", list(_sources()))
@pytest.mark.slow
def test_discarded_results_leave_no_cycles(path: Path) -> None:
    data = path.read_bytes()
    assert _cyclic_garbage(lambda: loopc.check_source(data, path=str(path))) == []
    assert _cyclic_garbage(lambda: loopc.compile_source(data, path=str(path))) == []


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_layer_of_a_kept_result_is_acyclic(path: Path) -> None:
    """Touch every lazily built part of a result (line index, pointers,
    parents, the decoded artifact) before dropping it."""
    data = path.read_bytes()

    def use() -> None:
        res = loopc.compile_source(data)
        assert res.ok, res.diagnostics
        check = res.check
        doc = check.document
        assert check.line_index is not None and check.line_index.position(len(doc.text)) is not None
        stack = [doc.root]
        while stack:
            node = stack.pop()
            assert node.pointer is not None
            items = getattr(node, "items", ())
            for item in items:
                child = item[1] if isinstance(item, tuple) else item
                assert child.parent is node
                stack.append(child)
        assert res.artifact is not None
        decode(res.bytes)
        compile_checked(check)

    assert _cyclic_garbage(use) == []


def test_the_library_never_changes_the_gc_state() -> None:
    data = EXAMPLES[0].read_bytes()
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            before = gc.get_threshold()
            res = loopc.compile_source(data)
            decode(res.bytes)
            assert gc.isenabled() is enabled and gc.get_threshold() == before
    finally:
        gc.enable()


def test_the_probe_sees_a_cycle() -> None:
    def cyclic() -> None:
        a: list[Any] = []
        a.append(a)

    assert _cyclic_garbage(cyclic) == ["list"]


def test_pause_gc_is_accepted_deprecated_and_ignored() -> None:
    data = EXAMPLES[0].read_bytes()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plain = loopc.check_source(data)
    for entry in (loopc.check_source, loopc.compile_source):
        with pytest.warns(DeprecationWarning, match="pause_gc"):
            res = entry(data, pause_gc=True)
        assert gc.isenabled()
        assert res.diagnostics == plain.diagnostics
    with pytest.warns(DeprecationWarning, match="pause_gc"):
        assert compile_checked(plain, pause_gc=False).ok


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_incremental_re_checks_leave_no_cycles(path: Path) -> None:
    """The incremental re-check (loopc.pipeline.incremental) builds spliced
    trees as acyclic as loaded ones: a checker and every result it gave,
    parents and pointers walked, are freed by reference counting alone."""
    from loopc.pipeline.incremental import IncrementalChecker

    text = path.read_text(encoding="utf-8")
    at = text.index("id: ", text.index("\nnodes:")) + 5  # inside the first node's id
    edited = [text[:at] + "q" + text[at:], text, text[:at] + "qz" + text[at:]]

    def use() -> None:
        checker = IncrementalChecker()
        checker.check(text)
        for src in edited:
            res = checker.check(src)
            assert checker.last_mode == "incremental", checker.last_reason
            stack = [res.document.root]
            while stack:
                node = stack.pop()
                assert node.pointer is not None
                children = node.values() if hasattr(node, "values") else getattr(node, "items", ())
                for child in children:
                    assert child.parent is node
                    stack.append(child)
            assert res.symbols is not None and res.source_map is not None

    assert _cyclic_garbage(use) == []
