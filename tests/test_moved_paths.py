"""The deprecated import paths of docs/api.md "Moved import paths"
(``loopc.compiler.driver``, ``loopc.ir.api``) are removed: the package had
no outside users, so no alias is kept running upward against the layers.
Their names stay importable from :mod:`loopc.pipeline` (and the package
root), and nothing in the package, the tests or the benchmarks names the old
modules except a benchmark's fallback for checkouts before the pipeline layer."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import loopc

SRC = Path(loopc.__file__).resolve().parent
# removed module -> (its new home, the names it exported)
REMOVED = {
    "loopc.compiler.driver": (
        "loopc.pipeline.check",
        ["MAX_DIAGNOSTICS", "CheckResult", "cap_diagnostics", "cap_result", "check_file", "check_source"],
    ),
    "loopc.ir.api": (
        "loopc.pipeline",
        ["CompileResult", "bench_compile", "compile_checked", "compile_file", "compile_source"],
    ),
}


@pytest.mark.parametrize("module", sorted(REMOVED))
def test_the_deprecated_module_is_gone(module: str) -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(module)


@pytest.mark.parametrize(("module", "name"), [(m, n) for m, (_, names) in sorted(REMOVED.items()) for n in names])
def test_its_names_live_in_the_pipeline(module: str, name: str) -> None:
    home = importlib.import_module(REMOVED[module][0])
    assert hasattr(home, name), f"{module}.{name} has no home in {home.__name__}"


@pytest.mark.parametrize("name", ["compile_source", "compile_file", "compile_checked", "CompileResult"])
def test_loopc_ir_no_longer_reaches_up_to_the_pipeline(name: str) -> None:
    import loopc.ir

    assert name not in loopc.ir.__all__
    with pytest.raises(AttributeError):
        getattr(loopc.ir, name)
    assert hasattr(loopc, name) or hasattr(importlib.import_module("loopc.pipeline"), name)


def test_loopc_ir_loads_its_names_by_import_statements() -> None:
    """No importlib in ``loopc.ir``: every lazy name is a plain import the
    import graph (tests/test_import_cycles.py) and import-linter see."""
    import loopc.ir

    assert "importlib" not in (SRC / "ir" / "__init__.py").read_text(encoding="utf-8")
    for name in loopc.ir.__all__:
        assert getattr(loopc.ir, name) is not None


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_nothing_in_the_package_imports_a_removed_path() -> None:
    users = {str(p.relative_to(SRC)): sorted(set(REMOVED) & _imports(p)) for p in SRC.rglob("*.py")}
    assert {k: v for k, v in users.items() if v} == {}
