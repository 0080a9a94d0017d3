"""No big rooms in loopc (issue 24 item 3; docs/architecture.md#static-checks):
no module of ``src/loopc`` over :data:`MAX_LINES` lines and no class over
:data:`MAX_METHODS` methods, except the offenders listed below.

Each allowlist entry is an offender known today, with its size when it was
listed and the reason it is still big.  The lists may only shrink: an entry
whose room grew past its recorded size fails (split it along its seams rather
than raising the number), an entry that is no longer an offender (split, or
gone) fails until it is removed, and a new offender fails.  Lowering a
recorded size after a partial split is welcome.

Lines are the file's lines (``wc -l``); methods are the ``def`` / ``async
def`` statements directly in a class body (properties and static methods
included, nested classes counted on their own).
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "loopc"

MAX_LINES = 800
MAX_METHODS = 40

#: module (relative to src/loopc) -> (lines when listed, why it is still big)
BIG_MODULES: dict[str, tuple[int, str]] = {}

#: (module, class qualified name) -> (methods when listed, why it is still big)
BIG_CLASSES: dict[tuple[str, str], tuple[int, str]] = {}


def _modules() -> dict[str, Path]:
    return {p.relative_to(SRC).as_posix(): p for p in sorted(SRC.rglob("*.py"))}


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def _classes(path: Path) -> dict[str, int]:
    """Qualified class name -> its number of methods, for every class of the module."""
    out: dict[str, int] = {}
    todo: list[tuple[str, ast.AST]] = [("", ast.parse(path.read_text(encoding="utf-8")))]
    while todo:
        prefix, node = todo.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                name = prefix + child.name
                out[name] = sum(isinstance(x, (ast.FunctionDef, ast.AsyncFunctionDef)) for x in child.body)
                todo.append((name + ".", child))
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                todo.append((prefix + child.name + ".<locals>.", child))
            else:
                todo.append((prefix, child))
    return out


def test_no_module_over_the_line_limit() -> None:
    problems = []
    for rel, path in _modules().items():
        n = _lines(path)
        listed = BIG_MODULES.get(rel)
        if listed is None:
            if n > MAX_LINES:
                problems.append(f"{rel}: {n} lines (> {MAX_LINES}); split it along its seams")
        elif n > listed[0]:
            problems.append(f"{rel}: {n} lines, grew past its listed {listed[0]}; split it instead")
    assert not problems, "\n".join(problems)


def test_no_class_over_the_method_limit() -> None:
    problems = []
    for rel, path in _modules().items():
        for name, n in _classes(path).items():
            listed = BIG_CLASSES.get((rel, name))
            if listed is None:
                if n > MAX_METHODS:
                    problems.append(f"{rel} {name}: {n} methods (> {MAX_METHODS}); split it along its seams")
            elif n > listed[0]:
                problems.append(f"{rel} {name}: {n} methods, grew past its listed {listed[0]}; split it instead")
    assert not problems, "\n".join(problems)


def test_the_allowlists_only_hold_offenders() -> None:
    """An entry that is no longer an offender goes (the lists only shrink)."""
    modules = _modules()
    stale = []
    for rel in BIG_MODULES:
        if rel not in modules:
            stale.append(f"{rel}: gone; remove it from BIG_MODULES")
        elif _lines(modules[rel]) <= MAX_LINES:
            stale.append(f"{rel}: {_lines(modules[rel])} lines now; remove it from BIG_MODULES")
    for rel, name in BIG_CLASSES:
        n = _classes(modules[rel]).get(name) if rel in modules else None
        if n is None:
            stale.append(f"{rel} {name}: gone; remove it from BIG_CLASSES")
        elif n <= MAX_METHODS:
            stale.append(f"{rel} {name}: {n} methods now; remove it from BIG_CLASSES")
    assert not stale, "\n".join(stale)


def test_the_allowlists_record_reasons() -> None:
    for entry in (*BIG_MODULES.values(), *BIG_CLASSES.values()):
        assert entry[0] > 0 and entry[1].strip()


def test_the_counters(tmp_path: Path) -> None:
    """The counts the limits apply to: methods directly in a class body
    (async ones and properties included), nested classes on their own."""
    p = tmp_path / "m.py"
    p.write_text(
        "class A:\n"
        "    x = 1\n"
        "    def f(self): pass\n"
        "    async def g(self): pass\n"
        "    @property\n"
        "    def h(self): return 1\n"
        "    class B:\n"
        "        def i(self): pass\n"
        "def k():\n"
        "    class C:\n"
        "        pass\n",
        encoding="utf-8",
    )
    assert _classes(p) == {"A": 3, "A.B": 1, "k.<locals>.C": 0}
    assert _lines(p) == 11
